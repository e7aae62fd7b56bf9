#include "common/modellist.h"

#include "common/workbenchstate.h"

#include "diode/modelpackage.h"

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
        k.name = QString::fromStdString(m.value("name", QFileInfo(path).baseName().toStdString()));
        // Labelled where it is chosen: a cpu model ranks the cpu backend's tiles, not GPU kernels.
        if (pkg.timingMethod() == diode::TimingMethod::Cpu)
            k.name += QStringLiteral(" (cpu model)");
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

} // namespace

ModelList::ModelList(QObject *parent)
    : QAbstractTableModel(parent) {
    const QStringList paths = QSettings().value(QStringLiteral("models/known")).toStringList();
    for (const QString &p : paths)
        if (auto k = readPackage(p, nullptr))
            m_models.append(*k); // moved or deleted packages drop out
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
        return m.path;
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case Name:
        return m.name;
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
    static const char *names[] = {"model", "test top-1", "problems", "created", "file"};
    return section >= 0 && section < Count ? QVariant(tr(names[section])) : QVariant();
}
