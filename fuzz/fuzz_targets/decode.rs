//! The body is `manet_mutex_testkit::fuzz::decode`: arbitrary bytes decoded as each of the
//! four message types, as they are (which exercises the checks up to the frame check: random
//! bytes almost never end in their own CRC) and with their CRC appended (which reaches the
//! body decoder), and every frame that decodes re-encoded and decoded again.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| manet_mutex_testkit::fuzz::decode::run(data));
