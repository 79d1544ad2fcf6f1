// InFlight: a wait covers the requests that began before it, not those that
// begin during it.
#include "fs/in_flight.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace strata::fs {
namespace {

using std::chrono::milliseconds;

TEST(InFlightTest, AWaitWithNothingInFlightReturnsAtOnce) {
  InFlight in_flight;
  EXPECT_TRUE(in_flight.WaitForEarlier(milliseconds(0)));
  { InFlightScope done(&in_flight); }
  EXPECT_TRUE(in_flight.WaitForEarlier(milliseconds(0)));
}

TEST(InFlightTest, AWaitLastsUntilEveryEarlierRequestLeft) {
  InFlight in_flight;
  const unsigned first = in_flight.Enter();
  std::atomic<bool> waited{false};
  std::thread waiter([&] { waited = in_flight.WaitForEarlier(milliseconds(10000)); });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(waited) << "the wait ended with a request still in flight";
  in_flight.Leave(first);
  waiter.join();
  EXPECT_TRUE(waited);
}

TEST(InFlightTest, RequestsBegunDuringAWaitDoNotHoldIt) {
  InFlight in_flight;
  const unsigned early = in_flight.Enter();
  std::atomic<bool> waited{false}, done{false};
  std::thread waiter([&] {
    waited = in_flight.WaitForEarlier(milliseconds(10000));
    done = true;
  });
  std::this_thread::sleep_for(milliseconds(20));  // the waiter has moved the epoch by now
  const unsigned late = in_flight.Enter();
  in_flight.Leave(early);
  waiter.join();
  EXPECT_TRUE(waited);
  EXPECT_TRUE(done);
  // The late request still counts for the next wait.
  EXPECT_FALSE(in_flight.WaitForEarlier(milliseconds(30)));
  in_flight.Leave(late);
  EXPECT_TRUE(in_flight.WaitForEarlier(milliseconds(0)));
}

TEST(InFlightTest, AWaitGivesUpAtItsLimit) {
  InFlight in_flight;
  const unsigned stuck = in_flight.Enter();
  EXPECT_FALSE(in_flight.WaitForEarlier(milliseconds(20)));
  in_flight.Leave(stuck);
}

}  // namespace
}  // namespace strata::fs
