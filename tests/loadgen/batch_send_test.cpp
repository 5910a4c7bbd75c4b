// BatchSend: a round's last bytes sent together, by io_uring or a send loop,
// each byte on its own connection, failures reported per socket.
#include "loadgen/batch_send.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

namespace crh::test {
namespace {

// `n` loopback TCP connections: the sending ends and the accepted ends.
struct Connections {
  explicit Connections(int n) {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(listener, n), 0);
    EXPECT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len), 0);
    for (int i = 0; i < n; ++i) {
      senders.push_back(socket(AF_INET, SOCK_STREAM, 0));
      EXPECT_EQ(connect(senders.back(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
      receivers.push_back(accept(listener, nullptr, nullptr));
    }
  }
  ~Connections() {
    for (int fd : senders) close(fd);
    for (int fd : receivers) close(fd);
    close(listener);
  }
  std::string read(int i, std::size_t n) {
    std::string out(n, '\0');
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = recv(receivers[static_cast<std::size_t>(i)], out.data() + got, n - got, 0);
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
  }
  int listener = -1;
  std::vector<int> senders, receivers;
};

void sends_each_its_bytes(loadgen::BatchSend& batch, int n) {
  Connections c(n);
  std::vector<std::string> bytes;
  for (int i = 0; i < n; ++i) bytes.push_back(std::string(1 + i % 3, static_cast<char>('a' + i)));
  std::vector<std::string_view> views(bytes.begin(), bytes.end());
  std::vector<long> sent(static_cast<std::size_t>(n));
  for (int round = 0; round < 3; ++round) {  // the ring is reused round after round
    batch.send_all(c.senders, views, sent);
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(sent[static_cast<std::size_t>(i)], static_cast<long>(bytes[static_cast<std::size_t>(i)].size()))
          << "connection " << i << ", round " << round << ", by " << batch.path();
      EXPECT_EQ(c.read(i, bytes[static_cast<std::size_t>(i)].size()), bytes[static_cast<std::size_t>(i)]);
    }
  }
}

TEST(BatchSend, EveryConnectionGetsItsOwnBytesRoundAfterRound) {
  loadgen::BatchSend batch(8);
  sends_each_its_bytes(batch, 8);
  EXPECT_TRUE(batch.path().starts_with("io_uring") || batch.path().starts_with("send loop (")) << batch.path();
  EXPECT_NE(batch.path().find("priority"), std::string::npos) << "says at which priority it sent: " << batch.path();
}

TEST(BatchSend, WithoutARingItSendsInALoopAndSaysWhy) {
  loadgen::BatchSend batch(0);  // a ring of no entries is refused
  EXPECT_TRUE(batch.path().starts_with("send loop (")) << batch.path();
  sends_each_its_bytes(batch, 4);
}

TEST(BatchSend, MoreCallersThanTheRingHoldsGoByTheLoop) {
  loadgen::BatchSend batch(2);
  sends_each_its_bytes(batch, 5);
}

TEST(BatchSend, AFailedSendIsReportedAndTheOthersStillGo) {
  loadgen::BatchSend batch(4);
  Connections c(3);
  std::vector<int> fds{c.senders[0], -1, c.senders[2]};
  std::vector<std::string_view> bytes{"x", "y", "z"};
  std::vector<long> sent(3);
  batch.send_all(fds, bytes, sent);
  EXPECT_EQ(sent[0], 1);
  EXPECT_EQ(sent[1], -EBADF);
  EXPECT_EQ(sent[2], 1);
  EXPECT_EQ(c.read(0, 1), "x");
  EXPECT_EQ(c.read(2, 1), "z");
}

}  // namespace
}  // namespace crh::test
