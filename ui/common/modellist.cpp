#include "common/modellist.h"

#include "common/shippedfile.h"
#include "common/workbenchstate.h"

#include "diode/analysis/wording.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/packagechoice.h"
#include "diode/infer/shippeddata.h"

#include <QFileInfo>
#include <QSettings>

namespace {

enum Column { Name, Top1, Problems, Created, Path, Count };

std::optional<KnownModel> readPackage(const QString &path, QString *error) {
    try {
        const auto pkg = diode::ModelPackage::load(path.toStdString());
        const auto &m = pkg.manifest();
        KnownModel k;
        k.path = QFileInfo(path).absoluteFilePath();
        // Named by its file, as the plugin's folder and `diode inspect` show it (wording.h), not by
        // the manifest's name ("warm-raw" for the shipped h100-ingraph-warm).
        k.name = QString::fromStdString(diode::packageName(path.toStdString()));
        k.manifestName = QString::fromStdString(m.value("name", std::string()));
        k.gpu = QString::fromStdString(m.value("/hardware/gpu"_json_pointer, std::string()));
        k.timingMethod = QString::fromUtf8(diode::toString(pkg.timingMethod()).data());
        // Labelled where it is chosen: a cpu model ranks the cpu backend's tiles, not GPU kernels;
        // a GPU model says which GPU and which times it learnt ("warm" alone says neither).
        if (pkg.timingMethod() == diode::TimingMethod::Cpu)
            k.label = k.name + QStringLiteral(" (cpu model)");
        else
            k.label = QStringLiteral("%1 · %2 · %3")
                          .arg(k.name, k.gpu.isEmpty() ? QObject::tr("unknown GPU") : k.gpu, k.timingMethod);
        k.createdAt = QString::fromStdString(m.value("created_at", ""));
        const auto top1 =
            m.value("/metrics/test_split/model/all/top1_efficiency/mean"_json_pointer, nlohmann::json());
        k.testTop1 = top1.is_number() ? top1.get<double>() : 0.0;
        k.problems = m.value("/training_data/problems"_json_pointer, 0);
        return k;
    } catch (const std::exception &e) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, QString::fromUtf8(e.what()));
        return std::nullopt;
    }
}

diode::PackageFacts factsOf(const KnownModel &m) {
    diode::PackageFacts f;
    f.path = m.path.toStdString();
    f.name = m.name.toStdString();
    f.gpu = m.gpu.toStdString();
    f.createdAt = m.createdAt.toStdString();
    f.timingMethod =
        diode::parseTimingMethod(m.timingMethod.toStdString()).value_or(diode::TimingMethod::Cpu);
    return f;
}

} // namespace

ModelList::ModelList(QObject *parent)
    : QAbstractTableModel(parent) {
    const QStringList paths = QSettings().value(QStringLiteral("models/known")).toStringList();
    // The shipped packages first: the plugin's own (and the earlier data's) are always offered.
    const QString shipped = shippedFile(diode::shipped::kModelDirectory);
    if (!shipped.isEmpty())
        for (const auto &f : diode::packagesUnder(shipped.toStdString()))
            if (auto k = readPackage(QString::fromStdString(f.path), nullptr))
                m_models.append(*k);
    for (const QString &p : paths)
        if (rowOf(p) < 0)
            if (auto k = readPackage(p, nullptr))
                m_models.append(*k); // moved or deleted packages drop out
}

QString ModelList::packageForData(const QString &gpu, const QString &method) const {
    const auto m = diode::parseTimingMethod(method.toStdString());
    if (!m)
        return {};
    std::vector<diode::PackageFacts> facts;
    for (const auto &k : m_models)
        facts.push_back(factsOf(k));
    const auto choice = diode::packageForData(facts, gpu.toStdString(), *m);
    return choice ? QString::fromStdString(choice->path) : QString();
}

bool ModelList::fitsData(const QString &path, const QString &gpu, const QString &method) const {
    const int row = rowOf(path);
    const auto m = diode::parseTimingMethod(method.toStdString());
    return row >= 0 && m && diode::fitsData(factsOf(m_models[row]), gpu.toStdString(), *m);
}

ModelList *ModelList::of(WorkbenchState *state) {
    if (auto *list = state->findChild<ModelList *>(QString(), Qt::FindDirectChildrenOnly))
        return list;
    return new ModelList(state);
}

int ModelList::rowOf(const QString &path) const {
    const QString abs = QFileInfo(path).absoluteFilePath();
    for (int i = 0; i < m_models.size(); ++i)
        if (m_models[i].path == abs)
            return i;
    return -1;
}

int ModelList::add(const QString &path, QString *error) {
    auto k = readPackage(path, error);
    if (!k)
        return -1;
    const int row = rowOf(path);
    if (row >= 0) {
        m_models[row] = *k;
        emit dataChanged(index(row, 0), index(row, Count - 1));
        save();
        return row;
    }
    beginInsertRows({}, int(m_models.size()), int(m_models.size()));
    m_models.append(*k);
    endInsertRows();
    save();
    return int(m_models.size()) - 1;
}

void ModelList::save() const {
    QStringList paths;
    for (const auto &m : m_models)
        paths << m.path;
    QSettings().setValue(QStringLiteral("models/known"), paths);
}

int ModelList::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_models.size());
}

int ModelList::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : Count;
}

QVariant ModelList::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const KnownModel &m = m_models[index.row()];
    if (role == Qt::ToolTipRole)
        return m.manifestName.isEmpty() || m.manifestName == m.name
                   ? m.path
                   : tr("%1 (its manifest calls it \"%2\")").arg(m.path, m.manifestName);
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Name:
        return m.label;
    case Top1:
        return m.testTop1 > 0 ? QVariant(QString::number(m.testTop1, 'f', 4)) : QVariant(QStringLiteral("–"));
    case Problems:
        return m.problems;
    case Created:
        return m.createdAt;
    case Path:
        return m.path;
    default:
        return {};
    }
}

QVariant ModelList::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *names[] = {"model", "test top-1", "problem lines", "created", "file"};
    return section >= 0 && section < Count ? QVariant(tr(names[section])) : QVariant();
}
