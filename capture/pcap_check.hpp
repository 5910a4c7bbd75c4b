// `crh pcap check`: the contract judged on a capture, without sending anything.
#pragma once
