#include "validate/decisionpanel.h"

#include "common/messagelabel.h"
#include "common/sortabletable.h"

#include "diode/infer/decision.h"
#include "diode/infer/modelpackage.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

namespace {

enum Column {
    Package,
    Kind,
    Scope,
    Judged,
    Changed,
    Good,
    MuchSlower,
    FailedChosen,
    Pick,
    Fastest,
    TunedKept,
    Columns
};

QString kindText(diode::DecisionKind kind) {
    switch (kind) {
    case diode::DecisionKind::KernelConfig:
        return DecisionPanel::tr("Kernel config");
    case diode::DecisionKind::SmallMForm:
        return DecisionPanel::tr("Small-M form");
    case diode::DecisionKind::GemmKernel:
        break;
    }
    return DecisionPanel::tr("GEMM kernel");
}

QStandardItem *cell(const QString &text, const QVariant &sortKey, const QString &tip = {}) {
    auto *item = new QStandardItem(text);
    item->setData(sortKey, Qt::UserRole);
    item->setEditable(false);
    if (!tip.isEmpty())
        item->setToolTip(tip);
    if (sortKey.typeId() != QMetaType::QString)
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

QList<QStandardItem *> rowOf(const QString &packagePath, const diode::DecisionFigures &f) {
    const QString package = QFileInfo(packagePath).fileName();
    const bool kernels = f.kind == diode::DecisionKind::KernelConfig;
    const QString baseline =
        kernels ? DecisionPanel::tr("Inductor's default") : DecisionPanel::tr("the library kernel");
    QList<QStandardItem *> row;
    row << cell(package, package, QDir::toNativeSeparators(packagePath))
        << cell(kindText(f.kind), kindText(f.kind))
        << cell(QString::fromStdString(f.scope), QString::fromStdString(f.scope))
        << cell(f.notMeasured ? DecisionPanel::tr("%1 (+%2 unmeasured)").arg(f.judged).arg(f.notMeasured)
                              : QString::number(f.judged),
                f.judged, QString::fromStdString(diode::notMeasuredNote(f.notMeasured)))
        << cell(QString::number(f.changed), f.changed,
                kernels ? DecisionPanel::tr("kernels given a configuration rather than Inductor's default")
                        : DecisionPanel::tr(
                              "sites given the multiply-and-sum form rather than the library kernel"))
        << cell(QStringLiteral("%1 %").arg(100.0 * f.goodShare, 0, 'f', 1), f.goodShare,
                kernels ? DecisionPanel::tr("the pick within 3 % of the fastest configuration measured")
                        : DecisionPanel::tr("the faster of the two measured forms picked"))
        << cell(QString::number(f.muchSlower), f.muchSlower,
                DecisionPanel::tr("picks more than 10 % slower than %1").arg(baseline))
        << cell(kernels ? QString::number(f.failedChosen) : QStringLiteral("–"), f.failedChosen,
                DecisionPanel::tr(
                    "configurations chosen that had failed to compile, run or match the default's output"))
        << cell(QStringLiteral("%1×").arg(f.pickOverDefault, 0, 'f', 3), f.pickOverDefault,
                DecisionPanel::tr("the picks' time over %1's, geometric mean").arg(baseline))
        << cell(
               QStringLiteral("%1×").arg(f.bestOverDefault, 0, 'f', 3), f.bestOverDefault,
               DecisionPanel::tr("the fastest measured over %1's, geometric mean: the best any pick could do")
                   .arg(baseline))
        << cell(
               kernels ? DecisionPanel::tr("%1 of %2").arg(f.tunedKept).arg(f.defaultTuned)
                       : QStringLiteral("–"),
               f.tunedKept,
               DecisionPanel::tr("kernels whose default Inductor benchmarks at their first run (several "
                                 "configurations), and those of them the decision kept at it: benchmarked in "
                                 "every compile that misses Inductor's autotune cache"));
    return row;
}

// One package's figures as read off its manifest, or why they cannot be.
struct PackageFigures {
    QString path, name;
    std::vector<diode::DecisionFigures> rows;
    QString built; ///< what its decision models were built from
    QString error;
    bool any = false; ///< it carries a decision model
};

} // namespace

DecisionPanel::DecisionPanel(QWidget *parent)
    : QWidget(parent)
    , m_about(new QLabel(this))
    , m_judge(new QPushButton(tr("Judge on measured lines…"), this))
    , m_message(new MessageLabel(this))
    , m_model(new QStandardItemModel(0, Columns, this)) {
    setObjectName(QStringLiteral("decisionPanel"));
    m_about->setWordWrap(true);
    m_about->setObjectName(QStringLiteral("decisionAbout"));
    m_judge->setObjectName(QStringLiteral("judgeDecisionLines"));
    m_judge->setToolTip(
        tr("Judge the package's decisions on kernel and site lines that `diode sweep-kernels` "
           "measured (JSON lines), as `diode eval --decision-lines` does"));
    m_model->setHorizontalHeaderLabels({tr("Package"), tr("Decision"), tr("Held out / lines"), tr("Judged"),
                                        tr("Changed"), tr("Good pick"), tr("> 10 % slower"),
                                        tr("Failed chosen"), tr("Pick time / baseline"),
                                        tr("Fastest / baseline"), tr("Tuned defaults kept")});
    // The ratios are times (lower is better) over Inductor's default config for kernel configs and
    // over the library kernel for forms: the headers say so where the columns' cells do not.
    const QString baselines =
        tr("baseline: Inductor's default config for a kernel config, the library kernel "
           "for a small-M form; a time ratio, lower is better");
    for (int c : {Pick, Fastest})
        m_model->horizontalHeaderItem(c)->setToolTip(baselines);
    m_view = makeSortableTable(m_model, QStringLiteral("decisionTable"), this);
    m_view->sortByColumn(-1, Qt::AscendingOrder); // as added: families, all pooled, then lines judged

    auto *top = new QHBoxLayout;
    top->addWidget(m_about, 1);
    top->addWidget(m_judge, 0, Qt::AlignTop);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_message);
    layout->addWidget(m_view, 1);
    connect(m_judge, &QPushButton::clicked, this, &DecisionPanel::chooseLines);
    setPackages({});
}

QStringList DecisionPanel::distinctPackages(const QStringList &paths) {
    QStringList out;
    for (const auto &p : paths)
        if (!p.isEmpty() && !out.contains(p))
            out << p;
    return out;
}

void DecisionPanel::setPackages(const QStringList &paths) {
    m_packages = distinctPackages(paths);
    m_model->removeRows(0, m_model->rowCount());
    m_message->showMessage({}, false);
    m_judge->setEnabled(false);
    m_judgeable.clear();
    if (m_packages.isEmpty()) {
        m_about->setText(tr("Choose a model to see its decisions beside the GEMM kernel."));
        m_jobs.cancel();
        emit shown();
        return;
    }
    QStringList names;
    for (const auto &p : m_packages)
        names << QFileInfo(p).fileName();
    m_about->setText(tr("Reading %1…").arg(names.join(QStringLiteral(", "))));
    m_jobs.start([this, paths = m_packages](const AsyncJobs::Job &job) {
        std::vector<PackageFigures> read;
        for (const auto &path : paths) {
            PackageFigures f;
            f.path = path;
            f.name = QFileInfo(path).fileName();
            try {
                const auto manifest = diode::ModelPackage::load(path.toStdString()).manifest();
                const auto models = diode::DecisionModels::fromManifest(manifest);
                f.any = models.kernelConfig || models.smallMForm;
                f.rows = diode::heldOutFigures(manifest);
                QStringList summary;
                for (const auto &line : diode::decisionModelsSummary(manifest))
                    summary << QString::fromStdString(line);
                f.built = summary.join(QStringLiteral("; "));
            } catch (const std::exception &e) {
                f.error = QString::fromStdString(e.what());
            }
            read.push_back(std::move(f));
        }
        job.post([this, read] {
            QStringList about, errors;
            bool any = false;
            m_judgeable.clear();
            for (const auto &f : read) {
                if (!f.error.isEmpty()) {
                    about << tr("%1: its decisions cannot be shown.").arg(f.name);
                    errors << tr("%1: %2").arg(f.name, f.error);
                } else if (!f.any) {
                    about << tr("%1 carries no decision models beside the GEMM kernel: with it the plugin "
                                "leaves kernel configurations and small-M forms to Inductor. "
                                "`diode train-decisions` adds them from measured kernel and site lines.")
                                 .arg(f.name);
                } else {
                    about << tr("%1, decisions %2.").arg(f.name, f.built);
                    any = true;
                    m_judgeable << f.path;
                    for (const auto &row : f.rows)
                        m_model->appendRow(rowOf(f.path, row));
                }
            }
            if (any)
                about << tr(
                    "Each model family held out in turn (the models built from the other families, "
                    "judged on it), then all pooled, as recorded when the decisions were trained. A "
                    "kernel config is good within 3 % of the fastest measured; a form is good when it "
                    "is the faster of the two.");
            m_about->setText(about.join(QLatin1Char('\n')));
            if (!errors.isEmpty())
                m_message->showMessage(errors.join(QLatin1Char('\n')), true);
            m_judge->setEnabled(any);
            emit shown();
        });
    });
}

void DecisionPanel::chooseLines() {
    const QStringList paths = QFileDialog::getOpenFileNames(
        this, tr("Measured kernel and site lines"), {}, tr("Kernel and site lines (*.jsonl);;All files (*)"));
    if (!paths.isEmpty())
        judgeLines(paths);
}

void DecisionPanel::judgeLines(const QStringList &paths) {
    if (m_judgeable.isEmpty())
        return;
    m_message->showMessage(tr("Judging on %n file(s)…", nullptr, int(paths.size())), false);
    // Only the packages shown with decision models: one that failed to load, or has none, said so
    // already and would only repeat it.
    m_jobs.start([this, packages = m_judgeable, paths](const AsyncJobs::Job &job) {
        std::vector<std::pair<QString, diode::DecisionFigures>> rows;
        QStringList notes, errors;
        try {
            std::vector<std::string> files;
            QStringList names;
            for (const auto &p : paths) {
                files.push_back(p.toStdString());
                names << QFileInfo(p).fileName();
            }
            const auto data = diode::readDecisionData(files);
            const std::string scope = names.join(QStringLiteral(", ")).toStdString();
            for (const auto &package : packages) {
                try {
                    const QString name = QFileInfo(package).fileName();
                    const auto manifest = diode::ModelPackage::load(package.toStdString()).manifest();
                    const auto models = diode::DecisionModels::fromManifest(manifest);
                    const auto e = diode::evaluateDecisionLines(models, data);
                    QStringList caveats; // what these figures are not, before they are read
                    for (const auto &c : diode::decisionLinesCaveats(manifest, data))
                        caveats << QString::fromStdString(c);
                    const size_t before = rows.size();
                    if (e.kernelConfig)
                        rows.emplace_back(package, diode::figuresOf(*e.kernelConfig, scope));
                    if (e.smallMForm)
                        rows.emplace_back(package, diode::figuresOf(*e.smallMForm, scope));
                    const QString who = packages.size() > 1 ? name + QStringLiteral(": ") : QString();
                    if (rows.size() == before)
                        notes << who + tr("%1 holds no kernel or site this package has a model of.")
                                           .arg(names.join(", "));
                    else if (e.sitesOfOpsNotMeasured)
                        caveats << tr("%n site(s) of ops the form model was not measured for are not judged: "
                                      "the plugin keeps the library kernel there.",
                                      nullptr, int(e.sitesOfOpsNotMeasured));
                    if (rows.size() > before && !caveats.isEmpty())
                        notes << who + tr("Note: %1.").arg(caveats.join(QStringLiteral("; ")));
                } catch (const std::exception &e) { // this package's rows are missing; the others' stay
                    errors << QFileInfo(package).fileName() + QStringLiteral(": ") +
                                  QString::fromStdString(e.what());
                }
            }
        } catch (const std::exception &e) { // the lines themselves
            errors = {QString::fromStdString(e.what())};
        }
        job.post([this, rows, errors, notes] {
            if (!errors.isEmpty())
                m_message->showMessage((errors + notes).join(QLatin1Char('\n')), true);
            else
                m_message->showMessage(notes.join(QLatin1Char('\n')), false);
            for (const auto &[package, f] : rows)
                m_model->appendRow(rowOf(package, f));
            emit shown();
        });
    });
}
