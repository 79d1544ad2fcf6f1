// Clang's thread-safety annotations, as macros.
//
// They state which mutex guards a member (GUARDED_BY) and which a function
// needs held, takes or gives back (REQUIRES, ACQUIRE, RELEASE, EXCLUDES), so
// that a clang build with -Wthread-safety (the fuzz build of scripts/fuzz.sh,
// with -Werror) rejects code that touches guarded state without its lock.
// Other compilers see nothing. Use them with util/mutex.h: libstdc++'s
// std::mutex carries no annotations, so the analysis cannot see it.
//
// Thread-safety: macros only.
#pragma once

#if defined(__clang__)
#define STRATA_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define STRATA_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (a mutex); the name shows in the warnings.
#define CAPABILITY(name) STRATA_THREAD_ANNOTATION(capability(name))
// An RAII type that holds a lock from construction to destruction.
#define SCOPED_CAPABILITY STRATA_THREAD_ANNOTATION(scoped_lockable)
// The member is read and written only with the lock held.
#define GUARDED_BY(mu) STRATA_THREAD_ANNOTATION(guarded_by(mu))
// What the pointer points to is used only with the lock held.
#define PT_GUARDED_BY(mu) STRATA_THREAD_ANNOTATION(pt_guarded_by(mu))
// Locks taken in this order only: this one before (ACQUIRED_BEFORE) or after
// (ACQUIRED_AFTER) the ones named. Checked by -Wthread-safety-beta only; the
// order is written for readers in any case.
#define ACQUIRED_BEFORE(...) STRATA_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) STRATA_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// The caller holds the lock (and still does on return).
#define REQUIRES(...) STRATA_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// The caller must not hold the lock: the function takes it.
#define EXCLUDES(...) STRATA_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function takes the lock and returns holding it.
#define ACQUIRE(...) STRATA_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
// The function gives back a lock the caller held.
#define RELEASE(...) STRATA_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// The function takes the lock when it returns `result`.
#define TRY_ACQUIRE(...) STRATA_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The function checks at run time that the lock is held (the analysis trusts it).
#define ASSERT_CAPABILITY(x) STRATA_THREAD_ANNOTATION(assert_capability(x))
// The function returns (a reference to) the lock named.
#define RETURN_CAPABILITY(x) STRATA_THREAD_ANNOTATION(lock_returned(x))
// The analysis skips this function: for locking it cannot follow; say why beside it.
#define NO_THREAD_SAFETY_ANALYSIS STRATA_THREAD_ANNOTATION(no_thread_safety_analysis)
