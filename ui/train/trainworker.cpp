#include "train/trainworker.h"

#include "common/trainingavailable.h"

#include "diode/config.h"
#if DIODE_HAVE_TORCH
#include "diode/train/trainingjob.h"
#endif

#include <QElapsedTimer>

TrainWorker::TrainWorker(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<diode::EpochReport>();
    qRegisterMetaType<TrainOutcome>();
}

TrainWorker::~TrainWorker() {
    if (m_stop)
        m_stop->store(true); // then m_jobs waits, one epoch at most
}

void TrainWorker::cancel() {
    if (!m_running)
        return;
    // Not AsyncJobs::cancel(): the run ends after this epoch and its result (the best network so
    // far, written) is still reported.
    m_stop->store(true);
    emit status(tr("Cancelling after the current epoch…"));
}

void TrainWorker::start(const TrainRequest &request) {
    QString why;
    if (!trainingAvailable(&why)) {
        emit failed(why);
        emit finished();
        return;
    }
    if (m_stop)
        m_stop->store(true); // an older run stops after its epoch; its result is stale
    m_stop = std::make_shared<std::atomic<bool>>(false);
    m_running = true;
    auto stop = m_stop;
    m_jobs.start([this, request, stop](const AsyncJobs::Job &job) {
        auto post = [&job](auto fn) { job.post(fn); };
#if DIODE_HAVE_TORCH
        QElapsedTimer clock;
        clock.start();
        try {
            diode::TrainingJob t;
            t.db = request.database.toStdString();
            t.out = request.out.toStdString();
            for (const QString &o : request.ops)
                t.filter.ops.push_back(o.toStdString());
            for (const QString &d : request.dtypes)
                t.filter.dtypes.push_back(d.toStdString());
            t.method = request.method;
            t.options = request.options;
            t.options.cancel = stop.get();
            t.options.progress = [post, this](const diode::EpochReport &r) {
                post([this, r] { emit progress(r); });
            };
            t.storePredictions = request.storePredictions;
            post([this] { emit status(tr("Loading problems and training…")); });
            const auto res = diode::runTrainingJob(t);
            TrainOutcome out;
            out.job = job.id();
            out.package = request.out;
            out.cancelled = res.train.cancelled;
            out.epochsRun = res.train.epochsRun;
            out.members = int(res.train.members.size());
            out.problems = int(res.problems);
            out.testProblems = int(res.train.split.test.size());
            out.method = QString::fromStdString(res.method.describe());
            out.cpuData = res.method.method == diode::TimingMethod::Cpu;
            out.modelId = res.modelId;
            const auto &m = res.train.testMetrics;
            out.testTop1 = m.value("/model/all/top1_efficiency/mean"_json_pointer, 0.0);
            out.testTop3 = m.value("/model/all/top3_efficiency/mean"_json_pointer, 0.0);
            out.atenTop1 = m.value("/baselines/aten/top1_efficiency/mean"_json_pointer, 0.0);
            out.seconds = clock.elapsed() / 1000.0;
            post([this, out] {
                m_running = false;
                emit resultReady(out);
                emit finished();
            });
        } catch (const std::exception &e) {
            const QString msg = tr("Training failed: %1").arg(QString::fromUtf8(e.what()));
            post([this, msg] {
                m_running = false;
                emit failed(msg);
                emit finished();
            });
        }
#else
        (void)request;
        (void)post;
        (void)stop;
#endif
    });
}
