#pragma once

#include "diode/infer/gemmproblem.h"

#include <QColor>
#include <QString>

// A series keeps its colour in every view and every file: a colour is looked up by
// what the series is (an op, a dtype, a selector or compile mode, model A or B), never by its
// position among the series a plot happens to show. By position, data without bf16 drew fp16 in
// bf16's colour, a second model moved every baseline to another colour, and a demo file with one
// more mode repainted the rest.

/// The k-th colour of the categorical palette (matplotlib's tab10, readable on light and dark
/// backgrounds), for series with no meaning beyond their order.
QColor paletteColour(int k);
QColor opColour(diode::GemmOp op);
QColor dtypeColour(diode::DType dtype);
/// A selector or compile mode by name, the same on the Demo and Validate pages: "plain torch.compile"
/// grey, "max-autotune" red, "plugin" blue, ... (the Demo's mode names and baselineTitle's).
/// A name not known gets a colour fixed by the name.
QColor selectorColour(const QString &name);
/// A kind of kernel of "where the time goes" (diode::DemoResult::kCategories): gemm blue, attention
/// orange, reduction green, pointwise purple, copy grey, other olive.
QColor categoryColour(const QString &category);
/// The colour of the k-th model compared side by side (Validate's model A, then B).
QColor modelColour(int k);
