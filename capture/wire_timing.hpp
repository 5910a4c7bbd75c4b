// Wire timing (issue 14 §2): the exchanges of a capture paired with the
// client's own operations, giving per operation the wire latency and the
// harness's overhead (client latency minus wire latency).
#pragma once
