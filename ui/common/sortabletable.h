#pragma once

#include <QString>

class QAbstractItemModel;
class QTableView;
class QWidget;

/// A table view over `model` behind a sort proxy (sorting by Qt::UserRole, so numbers sort as
/// numbers), whole-row selection, columns sized to content and CSV export; named `name`.
QTableView *makeSortableTable(QAbstractItemModel *model, const QString &name, QWidget *parent);
