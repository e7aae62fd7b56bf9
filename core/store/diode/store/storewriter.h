#pragma once

#include "diode/store/store.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <variant>

namespace diode {

/// The one writer of a sweep: a thread with its own connection that commits whatever is queued
/// in one transaction per batch. A problem's measurements are queued before its done marker, so
/// after a crash a problem is either complete in the database or absent from run_problems.
class StoreWriter {
public:
    explicit StoreWriter(const std::string &dbPath);
    ~StoreWriter(); ///< flushes; never throws

    struct MeasurementRow {
        int64_t runId;
        GemmProblem problem;
        Measurement measurement;
    };
    struct ProblemDone {
        int64_t runId;
        GemmProblem problem;
        std::string status;
        std::string error;
        double seconds;
    };
    struct Telemetry {
        int64_t runId;
        TelemetrySample sample;
    };
    struct RunStatus {
        int64_t runId;
        std::string status;
    };
    struct Baselines {
        int64_t runId;
        GemmProblem problem;
        std::vector<BaselineTiming> baselines;
    };
    using Item = std::variant<MeasurementRow, ProblemDone, Telemetry, RunStatus, Baselines>;

    /// Throws the writer's first error (StoreError) if it has failed.
    void push(Item item);
    /// Waits until everything pushed so far is committed; throws the writer's first error.
    void flush();
    int64_t committedItems() const;

private:
    void loop();
    void rethrowIfFailed();

    Store m_store;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::deque<Item> m_queue;
    bool m_busy = false;
    bool m_stop = false;
    bool m_flushing = false;
    int64_t m_committed = 0;
    std::exception_ptr m_error;
    std::thread m_thread;
};

} // namespace diode
