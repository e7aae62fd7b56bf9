#include "common/seriescolours.h"

#include "common/metricsmodel.h"

#include <QHash>

#include <iterator>

namespace {

const QColor kPalette[] = {QColor(31, 119, 180),  QColor(255, 127, 14),  QColor(44, 160, 44),
                           QColor(214, 39, 40),   QColor(148, 103, 189), QColor(140, 86, 75),
                           QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34),
                           QColor(23, 190, 207)};
enum Tab10 { Blue, Orange, Green, Red, Purple, Brown, Pink, Grey, Olive, Cyan };

} // namespace

QColor paletteColour(int k) {
    constexpr int n = int(std::size(kPalette));
    return kPalette[((k % n) + n) % n];
}

QColor opColour(diode::GemmOp op) {
    return paletteColour(int(op));
}

QColor dtypeColour(diode::DType dtype) {
    return paletteColour(int(dtype));
}

QColor selectorColour(const QString &name) {
    static const QHash<QString, int> known{{QStringLiteral("plain torch.compile"), Grey},
                                           {baselineTitle("aten"), Grey}, // what plain torch.compile runs
                                           {QStringLiteral("max-autotune"), Red},
                                           {baselineTitle("max-autotune"), Red},
                                           {baselineTitle("first-config"), Brown},
                                           {baselineTitle("first-config", true), Brown}, // cpu data's
                                           {QStringLiteral("plugin"), Blue},
                                           {QStringLiteral("plugin-cold"), Green},
                                           {QStringLiteral("plugin-top3"), Purple},
                                           {QStringLiteral("exhaustive-plugin"), Orange},
                                           {QStringLiteral("plugin-no-guard"), Brown},
                                           {QStringLiteral("plugin-max-autotune"), Pink},
                                           {QStringLiteral("cdt"), Olive},
                                           {QStringLiteral("plugin-cdt"), Cyan}};
    if (const auto it = known.find(name); it != known.end())
        return paletteColour(*it);
    return QColor::fromHsv(int(qHash(name) % 360), 160, 200); // stable for the name
}

QColor categoryColour(const QString &category) {
    static const QHash<QString, int> known{
        {QStringLiteral("gemm"), Blue},       {QStringLiteral("attention"), Orange},
        {QStringLiteral("reduction"), Green}, {QStringLiteral("pointwise"), Purple},
        {QStringLiteral("copy"), Grey},       {QStringLiteral("other"), Olive}};
    if (const auto it = known.find(category); it != known.end())
        return paletteColour(*it);
    return QColor::fromHsv(int(qHash(category) % 360), 160, 200);
}

QColor modelColour(int k) {
    return paletteColour(k == 0 ? Blue : k == 1 ? Orange : Purple + k - 2);
}
