//! The body is `manet_mutex_testkit::fuzz::driver::run`: arbitrary datagrams, from arbitrary
//! senders at arbitrary times, into a driver of each of the four algorithms (as they are, and
//! sealed as driver frames or hellos so that the field decoders see them); no panic, every
//! datagram counted, tables and queues within their caps.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| manet_mutex_testkit::fuzz::driver::run(data));
