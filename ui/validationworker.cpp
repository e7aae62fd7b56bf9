#include "validationworker.h"

#include "diode/datasplit.h"
#include "diode/evaluation.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace {

constexpr int kResidualBins = 60;

std::vector<double> sortedTop1(const std::vector<diode::RankedProblem> &ranked)
{
    std::vector<double> e;
    e.reserve(ranked.size());
    for (const auto &r : ranked) e.push_back(diode::topKEfficiency(r, 1));
    std::sort(e.begin(), e.end());
    return e;
}

// The table with only the problems whose label is in `keep`, candidates and configs as they were.
diode::PredictionTable onlyProblems(const diode::PredictionTable &t, const std::set<std::string> &keep)
{
    diode::PredictionTable out;
    out.configs = t.configs;
    out.configIds = t.configIds;
    for (size_t p = 0; p < t.problems.size(); ++p) {
        if (!keep.count(t.problems[p].label())) continue;
        out.problems.push_back(t.problems[p]);
        if (!t.problemIds.empty()) out.problemIds.push_back(t.problemIds[p]);
        for (uint32_t c = t.start[p]; c < t.start[p + 1]; ++c) {
            out.configOf.push_back(t.configOf[c]);
            out.measuredMs.push_back(t.measuredMs[c]);
        }
        out.start.push_back(uint32_t(out.configOf.size()));
    }
    return out;
}

void fillResiduals(ModelValidation &m, const diode::PredictionTable &t)
{
    m.residualCounts.assign(kResidualBins, 0.0);
    const double width = (m.residualHi - m.residualLo) / kResidualBins;
    for (size_t i = 0; i < t.candidates(); ++i) {
        const double meas = t.measuredMs[i], pred = m.predictedMs[i];
        if (!(meas > 0) || !(pred > 0)) continue;
        const double r = std::log(pred / meas);
        const int bin = std::clamp(int(std::floor((r - m.residualLo) / width)), 0, kResidualBins - 1);
        m.residualCounts[size_t(bin)] += 1;
    }
}

// Everything below runs on the worker thread and touches no QObject.
class Job {
public:
    Job(const ValidationRequest &req, const std::atomic<bool> &cancel)
        : m_req(req)
        , m_cancel(cancel)
    {
    }
    std::function<void(const QString &)> status;
    std::function<void(int, int)> progress;
    std::function<void(const ValidationResult &)> deliver;

    void run(ValidationResult &res)
    {
        QElapsedTimer clock;
        clock.start();
        std::unique_ptr<diode::Store> store;
        std::vector<diode::ModelPackage> packages;
        for (const QString &p : m_req.packages) {
            if (p.isEmpty()) continue;
            try {
                packages.push_back(diode::ModelPackage::load(p.toStdString()));
            } catch (const std::exception &e) {
                throw std::runtime_error(QStringLiteral("Cannot load model %1: %2").arg(p, e.what()).toStdString());
            }
        }
        if (packages.empty()) throw std::runtime_error("No model package chosen.");
        auto table = std::make_shared<diode::PredictionTable>();
        std::vector<diode::HeldOutProblems> held; // per package, of a database
        if (!m_req.problemsFile.isEmpty()) {
            status(QStringLiteral("Reading problems from %1…").arg(m_req.problemsFile));
            auto data = diode::loadDatasetJsonl(m_req.problemsFile.toStdString(), m_req.method);
            res.method = data.method;
            *table = diode::PredictionTable::fromProblems(data.problems);
        } else {
            if (!QFileInfo::exists(m_req.database))
                throw std::runtime_error(QStringLiteral("Database %1 does not exist.").arg(m_req.database).toStdString());
            status(QStringLiteral("Reading measurements from %1…").arg(m_req.database));
            store = std::make_unique<diode::Store>(m_req.database.toStdString(), diode::Store::Mode::ReadOnly);
            res.method = diode::chooseTimingMethod(m_req.method, store->methodCounts());
            *table = diode::PredictionTable::fromStore(*store, res.method.method);
            for (const auto &pkg : packages) held.push_back(diode::heldOutProblems(*store, pkg.manifest()));
            res.problemsBeforeCut = table->problems.size();
            if (m_req.heldOutOnly && held.front().known) {
                *table = onlyProblems(*table, held.front().labels);
                res.heldOutOnly = true;
            }
        }
        if (table->problems.empty() && res.heldOutOnly)
            throw std::runtime_error(QStringLiteral("None of the problems %1 never trained on has %2 here; choose all "
                                                    "problems of the database to validate on.")
                                         .arg(QString::fromStdString(packages.front().manifest().value("name", "the model")),
                                              QString::fromStdString(res.method.describe()))
                                         .toStdString());
        if (table->problems.empty())
            throw std::runtime_error(QStringLiteral("No problems with %1 to validate against.")
                                         .arg(QString::fromStdString(res.method.describe()))
                                         .toStdString());
        if (stopped()) return;
        res.table = table;
        for (uint32_t i = 0; i < table->candidates(); ++i)
            if (!std::isnan(table->measuredMs[i])) res.byMeasured.push_back(i);
        std::sort(res.byMeasured.begin(), res.byMeasured.end(),
                  [&](uint32_t a, uint32_t b) { return table->measuredMs[a] < table->measuredMs[b]; });

        for (size_t k = 0; k < packages.size(); ++k) {
            ModelValidation m;
            const auto &pkg = packages[k];
            m.packagePath = m_req.packages.value(int(k));
            m.name = QString::fromStdString(pkg.manifest().value("name", QFileInfo(m.packagePath).baseName().toStdString()));
            const int64_t stored = store ? diode::findStoredModel(*store, pkg.manifest()) : 0;
            if (stored) {
                status(QStringLiteral("Reading %1's predictions from the database…").arg(m.name));
                m.predictedMs = diode::storedPredictions(*store, stored, *table);
                m.source = QStringLiteral("predictions stored in the database (model %1)").arg(stored);
            } else {
                status(QStringLiteral("Predicting with %1…").arg(m.name));
                m.predictedMs = diode::computePredictions(pkg, *table, &m_cancel);
                m.source = QStringLiteral("predicted with the package");
            }
            if (stopped()) return;
            if (k < held.size() && held[k].known) {
                m.trainedOnShown = 0;
                for (const auto &p : table->problems) m.trainedOnShown += held[k].labels.count(p.label()) ? 0 : 1;
            } else {
                m.unknownWhy = k < held.size() ? QString::fromStdString(held[k].why)
                                               : QStringLiteral("problems from a file");
            }
            fillResiduals(m, *table);
            res.models.push_back(std::move(m));
            progress(int(k) + 1, int(packages.size()) + 2);
        }
        res.seconds = clock.elapsed() / 1000.0;
        deliver(res); // the scatter can be drawn now; metrics follow
        status(QStringLiteral("Ranking against the baselines…"));
        for (auto &m : res.models) {
            const auto ranked = diode::rankTable(*table, m.predictedMs, true);
            m.metrics = diode::evaluate(ranked);
            m.top1 = sortedTop1(ranked);
            if (stopped()) return;
        }
        const auto aten = diode::rankTableWithBaseline(*table, "aten");
        res.aten = diode::evaluate(aten);
        res.atenTop1 = sortedTop1(aten);
        if (stopped()) return;
        const auto first = diode::rankTableWithBaseline(*table, "first-config");
        res.firstConfig = diode::evaluate(first);
        res.defaultTop1 = sortedTop1(first);
        progress(int(packages.size()) + 2, int(packages.size()) + 2);
        res.complete = true;
        res.seconds = clock.elapsed() / 1000.0;
        deliver(res);
    }

private:
    bool stopped() const { return m_cancel.load(); }
    ValidationRequest m_req;
    const std::atomic<bool> &m_cancel;
};

} // namespace

ValidationWorker::ValidationWorker(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<ValidationResult>();
}

ValidationWorker::~ValidationWorker()
{
    cancel();
    joinThread();
}

void ValidationWorker::cancel()
{
    if (m_cancel) m_cancel->store(true);
    ++m_job; // whatever is still on its way is stale now
    if (m_running) {
        m_running = false;
        emit status(tr("Cancelled."));
        emit finished();
    }
}

void ValidationWorker::joinThread()
{
    for (const QPointer<QThread> &t : std::as_const(m_threads))
        if (t) t->wait();
}

void ValidationWorker::start(const ValidationRequest &request)
{
    cancel(); // the old thread stops at its next check; its results are stale
    const int job = ++m_job;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_running = true;
    auto cancelFlag = m_cancel;
    QThread *thread = QThread::create([this, request, job, cancelFlag] {
        auto post = [this, job](auto fn) {
            QMetaObject::invokeMethod(this, [this, job, fn] {
                if (job == m_job) fn();
            }, Qt::QueuedConnection);
        };
        Job work(request, *cancelFlag);
        work.status = [&](const QString &s) { post([this, s] { emit status(s); }); };
        work.progress = [&](int d, int t) { post([this, d, t] { emit progress(d, t); }); };
        work.deliver = [&](const ValidationResult &r) {
            ValidationResult copy = r;
            copy.job = job;
            post([this, copy] {
                if (copy.complete) m_running = false;
                emit resultReady(copy);
                if (copy.complete) emit finished();
            });
        };
        ValidationResult res;
        try {
            work.run(res);
        } catch (const std::exception &e) {
            const QString msg = QString::fromUtf8(e.what());
            post([this, msg] {
                m_running = false;
                emit failed(msg);
                emit finished();
            });
        }
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    m_threads.removeAll(nullptr);
    m_threads.append(thread);
    thread->start();
}
