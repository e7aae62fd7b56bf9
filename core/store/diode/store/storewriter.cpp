#include "storewriter.h"

namespace diode {

namespace {
constexpr size_t kMaxBatch = 20000;
// A commit costs the same for 1 row as for thousands: let rows gather this long before one.
constexpr auto kGather = std::chrono::milliseconds(20);
} // namespace

StoreWriter::StoreWriter(const std::string &dbPath)
    : m_store(dbPath)
    , m_thread([this] { loop(); }) {}

StoreWriter::~StoreWriter() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
}

void StoreWriter::rethrowIfFailed() {
    if (m_error)
        std::rethrow_exception(m_error);
}

void StoreWriter::push(Item item) {
    bool wasEmpty;
    {
        std::lock_guard lock(m_mutex);
        rethrowIfFailed();
        wasEmpty = m_queue.empty();
        m_queue.push_back(std::move(item));
    }
    if (wasEmpty)
        m_wake.notify_one();
}

void StoreWriter::flush() {
    std::unique_lock lock(m_mutex);
    m_flushing = true;
    m_wake.notify_one();
    m_idle.wait(lock, [this] { return (m_queue.empty() && !m_busy) || m_error; });
    m_flushing = false;
    rethrowIfFailed();
}

int64_t StoreWriter::committedItems() const {
    std::lock_guard lock(m_mutex);
    return m_committed;
}

void StoreWriter::loop() {
    std::vector<Item> batch;
    for (;;) {
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [this] { return m_stop || !m_queue.empty(); });
            if (m_queue.empty() && m_stop)
                return;
            m_wake.wait_for(lock, kGather,
                            [this] { return m_stop || m_flushing || m_queue.size() >= kMaxBatch; });
            const size_t n = std::min(m_queue.size(), kMaxBatch);
            batch.assign(std::make_move_iterator(m_queue.begin()),
                         std::make_move_iterator(m_queue.begin() + n));
            m_queue.erase(m_queue.begin(), m_queue.begin() + n);
            m_busy = true;
        }
        std::exception_ptr error;
        if (!m_error) {
            try {
                Store::Transaction tx(m_store);
                for (const auto &item : batch) {
                    std::visit(
                        [this](const auto &it) {
                            using T = std::decay_t<decltype(it)>;
                            if constexpr (std::is_same_v<T, MeasurementRow>)
                                m_store.insertMeasurement(it.runId, m_store.problemId(it.problem),
                                                          it.measurement);
                            else if constexpr (std::is_same_v<T, ProblemDone>)
                                m_store.markProblemDone(it.runId, m_store.problemId(it.problem), it.status,
                                                        it.error, it.seconds);
                            else if constexpr (std::is_same_v<T, Telemetry>)
                                m_store.insertTelemetry(it.runId, it.sample);
                            else if constexpr (std::is_same_v<T, Baselines>)
                                m_store.insertBaselines(it.runId, m_store.problemId(it.problem),
                                                        it.baselines);
                            else
                                m_store.setRunStatus(it.runId, it.status);
                        },
                        item);
                }
                tx.commit();
            } catch (...) {
                error = std::current_exception();
            }
        }
        {
            std::lock_guard lock(m_mutex);
            if (error && !m_error)
                m_error = error;
            if (!error)
                m_committed += int64_t(batch.size());
            m_busy = false;
        }
        batch.clear();
        m_idle.notify_all();
    }
}

} // namespace diode
