#include "validate/validationworker.h"

#include "diode/analysis/evaluationjob.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace {

constexpr int kResidualBins = 60;

void fillResiduals(ModelValidation &m, const diode::PredictionTable &t) {
    m.residualCounts.assign(kResidualBins, 0.0);
    const double width = (m.residualHi - m.residualLo) / kResidualBins;
    for (size_t i = 0; i < t.candidates(); ++i) {
        const double meas = t.measuredMs[i], pred = m.predictedMs[i];
        if (!(meas > 0) || !(pred > 0))
            continue;
        const double r = std::log(pred / meas);
        const int bin = std::clamp(int(std::floor((r - m.residualLo) / width)), 0, kResidualBins - 1);
        m.residualCounts[size_t(bin)] += 1;
    }
}

// The core's result as the page draws it (Qt strings, a residual histogram per model).
ValidationResult toValidation(const diode::EvaluationResult &r) {
    ValidationResult v;
    v.complete = r.complete;
    v.table = r.table;
    v.byMeasured = r.byMeasured;
    v.atenTop1 = r.atenTop1;
    v.defaultTop1 = r.defaultTop1;
    v.method = r.method;
    v.aten = r.aten;
    v.firstConfig = r.firstConfig;
    v.maxAutotune = r.maxAutotune;
    v.maxAutotuneTop1 = r.maxAutotuneTop1;
    v.seconds = r.seconds;
    v.heldOutOnly = r.heldOutOnly;
    v.problemsBeforeCut = r.problemsBeforeCut;
    for (const auto &e : r.models) {
        ModelValidation m;
        m.name = QString::fromStdString(e.name);
        m.packagePath = QString::fromStdString(e.packagePath);
        m.source = QString::fromStdString(e.source);
        m.predictedMs = e.predictedMs;
        m.top1 = e.top1;
        m.metrics = e.metrics;
        m.policyMetrics = e.policyMetrics;
        m.policyTop1 = e.policyTop1;
        m.policyMargin = e.policy.margin;
        m.trainedOnShown = e.trainedOnShown;
        m.speedupVsPlain = e.speedupVsPlain;
        m.speedupVsMaxAutotune = e.speedupVsMaxAutotune;
        m.unknownWhy = QString::fromStdString(e.unknownWhy);
        fillResiduals(m, *r.table);
        v.models.push_back(std::move(m));
    }
    return v;
}

} // namespace

ValidationWorker::ValidationWorker(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<ValidationResult>();
}

void ValidationWorker::cancel() {
    m_jobs.cancel(); // the running job stops at its next check; whatever it still posts is stale
    if (m_running) {
        m_running = false;
        emit status(tr("Cancelled."));
        emit finished();
    }
}

void ValidationWorker::start(const ValidationRequest &request) {
    cancel();
    m_running = true;
    m_jobs.start([this, request](const AsyncJobs::Job &job) {
        // The evaluation `diode eval` runs (core/analysis/diode/analysis/evaluationjob.h); this face draws
        // it.
        diode::EvaluationJob work;
        work.db = request.database.toStdString();
        work.problemsFile = request.problemsFile.toStdString();
        for (const QString &p : request.packages)
            work.packages.push_back(p.toStdString());
        work.method = request.method;
        work.heldOutOnly = request.heldOutOnly;
        work.cancel = job.cancelFlag();
        work.status = [&](const std::string &s) {
            const QString text = QString::fromStdString(s);
            job.post([this, text] { emit status(text); });
        };
        work.progress = [&](int d, int t) { job.post([this, d, t] { emit progress(d, t); }); };
        auto deliver = [&](const ValidationResult &r) {
            ValidationResult copy = r;
            copy.job = job.id();
            job.post([this, copy] {
                if (copy.complete)
                    m_running = false;
                emit resultReady(copy);
                if (copy.complete)
                    emit finished();
            });
        };
        work.predicted = [&](const diode::EvaluationResult &r) { deliver(toValidation(r)); };
        try {
            const auto res = diode::runEvaluationJob(work);
            if (!res.cancelled)
                deliver(toValidation(res));
        } catch (const std::exception &e) {
            const QString msg = QString::fromUtf8(e.what());
            job.post([this, msg] {
                m_running = false;
                emit failed(msg);
                emit finished();
            });
        }
    });
}
