#include "sweep/planform.h"

#include "diode/config.h"
#include "diode/infer/problemjson.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>
#include <stdexcept>

using json = nlohmann::json;

namespace {

[[noreturn]] void bad(const QString &field, const QString &why) {
    throw std::invalid_argument(QStringLiteral("%1: %2").arg(field, why).toStdString());
}

qint64 positive(const QString &s, const QString &field) {
    bool ok = false;
    const qint64 v = s.trimmed().toLongLong(&ok);
    if (!ok || v < 1)
        bad(field, QStringLiteral("'%1' is not a size ≥ 1").arg(s.trimmed()));
    return v;
}

QHBoxLayout *row(std::initializer_list<QWidget *> widgets) {
    auto *l = new QHBoxLayout;
    for (QWidget *w : widgets)
        l->addWidget(w);
    l->addStretch(1);
    return l;
}

} // namespace

QString resourcesDir() {
    for (const QString &dir :
         {QStringLiteral(DIODE_SOURCE_DIR "/resources"), QStringLiteral(DIODE_INSTALL_DATADIR "/resources")})
        if (QFileInfo::exists(dir + QStringLiteral("/plans")))
            return dir;
    return QStringLiteral(DIODE_SOURCE_DIR "/resources");
}

json parseSizes(const QString &text, const QString &field) {
    const QString t = text.trimmed();
    if (t.isEmpty())
        bad(field, QStringLiteral("is empty"));
    static const QRegularExpression logRe(
        QStringLiteral(R"(^log\s+(\d+)\s*\.\.\s*(\d+)\s+n(\d+)(?:\s+s(\d+))?(?:\s+m(\d+))?$)"));
    static const QRegularExpression gridRe(QStringLiteral(R"(^(\d+)\s*\.\.\s*(\d+)\s+([x+])\s*(\d+)$)"));
    if (auto m = logRe.match(t); m.hasMatch()) {
        json spec{{"min", positive(m.captured(1), field)},
                  {"max", positive(m.captured(2), field)},
                  {"count", positive(m.captured(3), field)},
                  {"seed", m.captured(4).isEmpty() ? 0 : m.captured(4).toLongLong()}};
        if (!m.captured(5).isEmpty())
            spec["multiple_of"] = positive(m.captured(5), field);
        if (spec["max"].get<qint64>() < spec["min"].get<qint64>())
            bad(field, QStringLiteral("max is below min"));
        return json{{"log_uniform", spec}};
    }
    if (auto m = gridRe.match(t); m.hasMatch()) {
        const qint64 lo = positive(m.captured(1), field), hi = positive(m.captured(2), field);
        const qint64 step = positive(m.captured(4), field);
        const bool geometric = m.captured(3) == QStringLiteral("x");
        if (hi < lo)
            bad(field, QStringLiteral("%1 is below %2").arg(hi).arg(lo));
        if (geometric && step < 2)
            bad(field, QStringLiteral("a geometric grid needs a factor ≥ 2"));
        json list = json::array();
        for (qint64 v = lo; v <= hi; v = geometric ? v * step : v + step) {
            list.push_back(v);
            if (list.size() > 100000)
                bad(field, QStringLiteral("grid has more than 100000 sizes"));
        }
        return list;
    }
    json list = json::array();
    for (const QString &part : t.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts))
        list.push_back(positive(part, field));
    return list;
}

PlanForm::PlanForm(QWidget *parent)
    : QWidget(parent) {
    auto line = [this](const QString &name, const QString &text, const QString &tip) {
        auto *e = new QLineEdit(text, this);
        e->setObjectName(name);
        e->setToolTip(tip);
        connect(e, &QLineEdit::textChanged, this, &PlanForm::settingsChanged);
        return e;
    };
    auto check = [this](const QString &text, bool on) {
        auto *c = new QCheckBox(text, this);
        c->setChecked(on);
        return c;
    };
    const QString sizeTip =
        tr("A list \"128, 256\", a grid \"64..4096 x2\" or \"64..512 +64\", or a log-uniform sample "
           "\"log 1..8192 n24 s15\" (count n, seed s, optional multiple m)");

    auto *settings = new QGroupBox(tr("Plan"), this);
    auto *sf = new QFormLayout(settings);
    m_name = line(QStringLiteral("planName"), QStringLiteral("my-sweep"), tr("Stored with the run"));
    m_searchSpace = new QComboBox(this);
    for (const auto space : diode::kSearchSpaces)
        m_searchSpace->addItem(QString::fromUtf8(space.data(), qsizetype(space.size())));
    m_searchSpace->setToolTip(tr("Inductor's max_autotune_gemm_search_space"));
    m_timeout = new QDoubleSpinBox(this);
    m_timeout->setRange(1, 86400);
    m_timeout->setValue(600);
    m_timeout->setSuffix(tr(" s per problem"));
    m_repeats = new QSpinBox(this);
    m_repeats->setRange(1, 1000);
    m_repeats->setValue(5);
    m_cpuBlockM = line(QStringLiteral("cpuBlockM"), "16, 64", tr("CPU backend: BLOCK_M values"));
    m_cpuBlockN = line(QStringLiteral("cpuBlockN"), "64, 256", tr("CPU backend: BLOCK_N values"));
    m_cpuBlockK = line(QStringLiteral("cpuBlockK"), "64, 256", tr("CPU backend: BLOCK_K values"));
    m_cpuThreads = line(QStringLiteral("cpuThreads"), "1, 2", tr("CPU backend: thread counts"));
    sf->addRow(tr("Name"), m_name);
    sf->addRow(tr("Search space"), m_searchSpace);
    sf->addRow(tr("Timeout"), m_timeout);
    sf->addRow(tr("CPU repeats"), m_repeats);
    sf->addRow(tr("CPU BLOCK_M"), m_cpuBlockM);
    sf->addRow(tr("CPU BLOCK_N"), m_cpuBlockN);
    sf->addRow(tr("CPU BLOCK_K"), m_cpuBlockK);
    sf->addRow(tr("CPU threads"), m_cpuThreads);
    connect(m_searchSpace, &QComboBox::currentIndexChanged, this, &PlanForm::settingsChanged);
    connect(m_timeout, &QDoubleSpinBox::valueChanged, this, &PlanForm::settingsChanged);
    connect(m_repeats, &QSpinBox::valueChanged, this, &PlanForm::settingsChanged);

    auto *entry = new QGroupBox(tr("Entry (a generator of problems)"), this);
    auto *ef = new QFormLayout(entry);
    m_entryName = new QLineEdit(QStringLiteral("entry"), this);
    m_mm = check("mm", true);
    m_addmm = check("addmm", false);
    m_bmm = check("bmm", false);
    m_bf16 = check("bf16", true);
    m_fp16 = check("fp16", false);
    m_fp32 = check("fp32", false);
    m_b = new QLineEdit(QStringLiteral("1"), this);
    m_m = new QLineEdit(QStringLiteral("64..1024 x2"), this);
    m_n = new QLineEdit(QStringLiteral("256, 512"), this);
    m_k = new QLineEdit(QStringLiteral("256"), this);
    for (QLineEdit *e : {m_b, m_m, m_n, m_k})
        e->setToolTip(sizeTip);
    m_m->setObjectName(QStringLiteral("entryM"));
    m_shapeSet = new QComboBox(this);
    m_shapeSet->setObjectName(QStringLiteral("shapeSet"));
    m_shapeSet->addItem(tr("none: N × K above"));
    for (const QFileInfo &f :
         QDir(resourcesDir() + QStringLiteral("/shapes")).entryInfoList({"*.json"}, QDir::Files))
        m_shapeSet->addItem(f.fileName(), f.absoluteFilePath());
    m_aRow = check(tr("row-major"), true);
    m_aT = check(tr("transposed"), false);
    m_bRow = check(tr("row-major"), true);
    m_bCol = check(tr("column-major (x @ W.t())"), false);
    m_zip = check(tr("pair M, N, K element-wise"), false);
    m_sample = new QSpinBox(this);
    m_sample->setRange(0, 1000000);
    m_sample->setSpecialValueText(tr("all"));
    m_seed = new QSpinBox(this);
    m_seed->setRange(0, 1 << 30);
    ef->addRow(tr("Name"), m_entryName);
    ef->addRow(tr("Ops"), row({m_mm, m_addmm, m_bmm}));
    ef->addRow(tr("DTypes"), row({m_bf16, m_fp16, m_fp32}));
    ef->addRow(tr("B (bmm)"), m_b);
    ef->addRow(tr("M"), m_m);
    ef->addRow(tr("N"), m_n);
    ef->addRow(tr("K"), m_k);
    ef->addRow(tr("Shape set"), m_shapeSet);
    ef->addRow(tr("A layout"), row({m_aRow, m_aT}));
    ef->addRow(tr("B layout"), row({m_bRow, m_bCol}));
    ef->addRow(QString(), m_zip);
    ef->addRow(tr("Sample"), row({m_sample, new QLabel(tr("seed"), this), m_seed}));
    auto *add = new QPushButton(tr("&Add entry to plan"), this);
    add->setObjectName(QStringLiteral("addEntry"));
    auto *fresh = new QPushButton(tr("New plan"), this);
    fresh->setToolTip(tr("Start an empty plan with these settings"));
    ef->addRow(row({add, fresh}));
    connect(add, &QPushButton::clicked, this, &PlanForm::addEntryRequested);
    connect(fresh, &QPushButton::clicked, this, &PlanForm::newPlanRequested);
    connect(m_shapeSet, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_n->setEnabled(i == 0);
        m_k->setEnabled(i == 0);
    });

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(settings);
    layout->addWidget(entry);
    layout->addStretch(1);
}

json PlanForm::entry(const QString &planDir) const {
    json e{{"name", m_entryName->text().trimmed().toStdString()}};
    json ops = json::array(), dtypes = json::array();
    for (QCheckBox *c : {m_mm, m_addmm, m_bmm})
        if (c->isChecked())
            ops.push_back(c->text().toStdString());
    for (QCheckBox *c : {m_bf16, m_fp16, m_fp32})
        if (c->isChecked())
            dtypes.push_back(c->text().toStdString());
    if (ops.empty())
        bad(tr("Ops"), tr("choose at least one"));
    if (dtypes.empty())
        bad(tr("DTypes"), tr("choose at least one"));
    e["ops"] = ops;
    e["dtypes"] = dtypes;
    if (m_bmm->isChecked())
        e["B"] = parseSizes(m_b->text(), "B");
    e["M"] = parseSizes(m_m->text(), "M");
    if (m_shapeSet->currentIndex() > 0) {
        e["shape_set"] = QDir(planDir).relativeFilePath(m_shapeSet->currentData().toString()).toStdString();
    } else {
        e["N"] = parseSizes(m_n->text(), "N");
        e["K"] = parseSizes(m_k->text(), "K");
        if (m_zip->isChecked())
            e["zip_sizes"] = true;
    }
    auto layouts = [](QCheckBox *plain, QCheckBox *transposed, const QString &field) {
        json v = json::array();
        if (plain->isChecked())
            v.push_back(false);
        if (transposed->isChecked())
            v.push_back(true);
        if (v.empty())
            bad(field, tr("choose at least one layout"));
        return v;
    };
    e["a_transposed"] = layouts(m_aRow, m_aT, tr("A layout"));
    e["b_transposed"] = layouts(m_bRow, m_bCol, tr("B layout"));
    if (m_sample->value() > 0)
        e["sample"] = {{"count", m_sample->value()}, {"seed", m_seed->value()}};
    return e;
}

void PlanForm::applySettings(json &plan) const {
    plan["name"] = m_name->text().trimmed().toStdString();
    plan["version"] = 1;
    plan["search_space"] = m_searchSpace->currentText().toStdString();
    plan["timeout_s"] = m_timeout->value();
    plan["repeats"] = m_repeats->value();
    plan["cpu"] = {{"block_m", parseSizes(m_cpuBlockM->text(), tr("CPU BLOCK_M"))},
                   {"block_n", parseSizes(m_cpuBlockN->text(), tr("CPU BLOCK_N"))},
                   {"block_k", parseSizes(m_cpuBlockK->text(), tr("CPU BLOCK_K"))},
                   {"threads", parseSizes(m_cpuThreads->text(), tr("CPU threads"))}};
    if (!plan.contains("entries"))
        plan["entries"] = json::array();
}

void PlanForm::showSettings(const json &plan) {
    const QSignalBlocker b1(m_name), b2(m_searchSpace), b3(m_timeout), b4(m_repeats), b5(m_cpuBlockM),
        b6(m_cpuBlockN), b7(m_cpuBlockK), b8(m_cpuThreads);
    if (!plan.is_object())
        return;
    m_name->setText(QString::fromStdString(plan.value("name", std::string())));
    m_searchSpace->setCurrentText(
        QString::fromStdString(plan.value("search_space", std::string(diode::kSearchSpaces[0]))));
    if (plan.contains("timeout_s") && plan["timeout_s"].is_number())
        m_timeout->setValue(plan["timeout_s"].get<double>());
    if (plan.contains("repeats") && plan["repeats"].is_number_integer())
        m_repeats->setValue(plan["repeats"].get<int>());
    auto list = [&](const char *key, QLineEdit *edit) {
        if (!plan.contains("cpu") || !plan["cpu"].is_object() || !plan["cpu"].contains(key))
            return;
        const json &v = plan["cpu"][key];
        QStringList parts;
        for (const auto &x : v.is_array() ? v : json::array({v}))
            parts << QString::fromStdString(x.dump());
        edit->setText(parts.join(QStringLiteral(", ")));
    };
    list("block_m", m_cpuBlockM);
    list("block_n", m_cpuBlockN);
    list("block_k", m_cpuBlockK);
    list("threads", m_cpuThreads);
}
