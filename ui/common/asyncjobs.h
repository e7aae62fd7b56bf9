#pragma once

#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <memory>

/// Work off the GUI thread, done one way for every page's loader and worker. Each start() is a
/// job with an id and a cancel flag; what a job posts back runs on the owner's thread only while
/// it is still the newest job, so a newer start() or a cancel() drops stale results. The
/// destructor cancels and waits for running jobs, so a job may use its owner until it returns.
class AsyncJobs {
public:
    /// What a running job sees of itself (copyable into the closures it posts).
    class Job {
    public:
        int id() const { return m_id; }
        /// Set by cancel() or a newer start(): stop at the next convenient point.
        bool cancelled() const { return m_cancel->load(); }
        const std::atomic<bool> *cancelFlag() const { return m_cancel.get(); }
        /// Runs `fn` on the owner's thread, unless a newer job started (or cancel()) by then.
        void post(std::function<void()> fn) const {
            auto current = m_current;
            const int id = m_id;
            QMetaObject::invokeMethod(
                m_owner.data(),
                [current, id, fn = std::move(fn)] {
                    if (current->load() == id)
                        fn();
                },
                Qt::QueuedConnection);
        }

    private:
        friend class AsyncJobs;
        int m_id = 0;
        QPointer<QObject> m_owner;
        std::shared_ptr<std::atomic<int>> m_current;
        std::shared_ptr<std::atomic<bool>> m_cancel;
    };

    explicit AsyncJobs(QObject *owner)
        : m_owner(owner) {}
    ~AsyncJobs() {
        cancel();
        m_pool.waitForDone();
    }
    AsyncJobs(const AsyncJobs &) = delete;
    AsyncJobs &operator=(const AsyncJobs &) = delete;

    /// Starts `work` on a pool thread as the newest job (older ones are cancelled and stale);
    /// returns its id.
    int start(std::function<void(const Job &)> work) {
        if (m_cancel)
            m_cancel->store(true);
        Job job;
        job.m_id = ++*m_current;
        job.m_owner = m_owner;
        job.m_current = m_current;
        job.m_cancel = m_cancel = std::make_shared<std::atomic<bool>>(false);
        m_pool.start([job, work = std::move(work)] { work(job); });
        return job.m_id;
    }
    /// Cancels the newest job and makes whatever it still posts stale.
    void cancel() {
        if (m_cancel)
            m_cancel->store(true);
        ++*m_current;
    }
    /// True while job `id` is the newest and not cancelled.
    bool isCurrent(int id) const { return m_current->load() == id; }
    /// Blocks until every job has returned (tests, and owners that must outlive their jobs).
    void waitForDone() { m_pool.waitForDone(); }

private:
    QPointer<QObject> m_owner;
    std::shared_ptr<std::atomic<int>> m_current = std::make_shared<std::atomic<int>>(0);
    std::shared_ptr<std::atomic<bool>> m_cancel;
    QThreadPool m_pool;
};
