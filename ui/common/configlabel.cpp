#include "common/configlabel.h"

QString configLabel(const diode::KernelConfig &c) {
    if (c.kind == "cpu")
        return QStringLiteral("cpu %1 %2×%3×%4 t%5")
            .arg(QString::fromStdString(c.name))
            .arg(c.blockM)
            .arg(c.blockN)
            .arg(c.blockK)
            .arg(c.threads);
    if (c.kind != "triton")
        return QStringLiteral("%1 %2").arg(QString::fromStdString(c.kind), QString::fromStdString(c.name));
    return QStringLiteral("triton %1 %2×%3×%4 G%5 s%6 w%7")
        .arg(QString::fromStdString(c.name))
        .arg(c.blockM)
        .arg(c.blockN)
        .arg(c.blockK)
        .arg(c.groupM)
        .arg(c.numStages)
        .arg(c.numWarps);
}

QString configLabel(const std::string &key) {
    try {
        return configLabel(diode::KernelConfig::fromJson(nlohmann::json::parse(key), "config"));
    } catch (const std::exception &) {
        return QString::fromStdString(key);
    }
}
