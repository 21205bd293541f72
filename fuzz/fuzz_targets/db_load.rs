//! Arbitrary bytes → `timeline::store::decode`: Ok or Err, never a panic. When a file loads, writing it
//! back and loading that gives the same database, and the written bytes are a fixed point.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(db) = timeline::store::decode(data) {
        let bytes = timeline::store::encode(&db);
        let again = timeline::store::decode(&bytes).expect("an encoded database loads");
        assert_eq!(again, db, "encode/decode changed the database");
        assert_eq!(
            timeline::store::encode(&again),
            bytes,
            "encoding is not stable"
        );
    }
});
