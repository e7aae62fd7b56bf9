#pragma once

#include "common/asyncjobs.h"

#include "diode/analysis/metrics.h"
#include "diode/analysis/predictiontable.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

/// What to validate: one or two packages against the problems of a database or a JSON-lines
/// file of problems with timings.
struct ValidationRequest {
    QString database;
    QString problemsFile; ///< used instead of the database when set
    QStringList packages; ///< one or two
    std::optional<diode::TimingMethod>
        method; ///< the measured times to compare with; nullopt: the data's default
    /// Of the database, only the problems the first model never trained on (its test split),
    /// when the database is its training data; otherwise every problem. Either way each model's
    /// result says how many of the problems it trained on (the Validate page defaults to this).
    bool heldOutOnly = false;
};

/// One model's predictions on the shared table, and what they give.
struct ModelValidation {
    QString name, packagePath;
    QString source;                  ///< where the predictions came from, for the status line
    std::vector<double> predictedMs; ///< per candidate of the table (NaN where none)
    std::vector<double> top1;        ///< per problem: top-1 efficiency, sorted ascending (a CDF)
    diode::SelectorMetrics metrics;
    /// The selection policy's decisions (what the plugin runs with this package) and its margin.
    diode::SelectorMetrics policyMetrics;
    std::vector<double> policyTop1; ///< per problem, sorted ascending
    double policyMargin = 0;
    std::vector<double> residualCounts; ///< histogram of ln(predicted / measured)
    /// Speed-up × of its picks over plain torch.compile's and max-autotune's (diode::ModelEvaluation).
    double speedupVsPlain = 0, speedupVsMaxAutotune = 0;
    double residualLo = -2, residualHi = 2;
    /// Problems of the table this model trained on; -1 where that cannot be told (problems from
    /// a file, or a database that is not its training data: `unknownWhy` says which).
    int trainedOnShown = -1;
    QString unknownWhy;
};

/// Everything the Validate page draws, as plain values. The table is shared, never modified.
struct ValidationResult {
    int job = 0;
    bool complete = false; ///< false for the first (scatter-only) delivery
    std::shared_ptr<const diode::PredictionTable> table;
    std::vector<uint32_t> byMeasured; ///< candidate indices with a timing, sorted by measured time
    std::vector<ModelValidation> models;
    std::vector<double> atenTop1, defaultTop1; ///< per problem, sorted ascending
    diode::MethodChoice method;                ///< whose measured times the table holds, and why
    diode::SelectorMetrics aten, firstConfig;
    /// max-autotune's pick, over the problems where Inductor's own benchmark ran (none: 0 problems).
    diode::SelectorMetrics maxAutotune;
    std::vector<double> maxAutotuneTop1; ///< per such problem, sorted ascending
    double seconds = 0;
    bool heldOutOnly = false;     ///< the table was cut to the first model's test split
    size_t problemsBeforeCut = 0; ///< problems of the source before that cut
};
Q_DECLARE_METATYPE(ValidationResult)

/// Loads problems and predictions and computes the validation on a worker thread. Predictions
/// come from the store when it holds them for the same package (`diode eval`, a training run),
/// else from the package's Eigen reader. A new start() or cancel() makes running work stale.
class ValidationWorker : public QObject {
    Q_OBJECT
public:
    explicit ValidationWorker(QObject *parent = nullptr);

    void start(const ValidationRequest &request);
    void cancel();
    bool isRunning() const { return m_running; }

signals:
    void progress(int done, int total);
    void status(const QString &text);
    /// Emitted twice per run: first with the predictions (complete == false) so the scatter
    /// shows early, then with metrics and curves.
    void resultReady(const ValidationResult &result);
    void finished();
    void failed(const QString &message);

private:
    bool m_running = false;
    AsyncJobs m_jobs{this}; // last: destroyed (cancelled and waited for) first
};
