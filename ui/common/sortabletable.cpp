#include "common/sortabletable.h"

#include "common/exportactions.h"

#include <QHeaderView>
#include <QSortFilterProxyModel>
#include <QTableView>

QTableView *makeSortableTable(QAbstractItemModel *model, const QString &name, QWidget *parent) {
    auto *view = new QTableView(parent);
    auto *proxy = new QSortFilterProxyModel(view);
    proxy->setSourceModel(model);
    proxy->setSortRole(Qt::UserRole);
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    view->verticalHeader()->hide();
    view->setObjectName(name);
    addTableExport(view, name);
    return view;
}
