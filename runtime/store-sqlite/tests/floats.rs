//! Floats keep their exact bits through the SQLite store: checkpoints, receipts and records are
//! JSON text in the file, so reading them back must parse every number to the same `f64` that
//! was written (serde_json's `float_roundtrip`, enabled for the workspace). Without it, about a
//! third of all doubles come back one unit in the last place off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code (helpers included): a panic is a failed test"
)]

mod common;

use common::{markers, open, receipt, save, temp_file, thread};
use serde_json::{Value, json};
use tenx_engine::ports::{ReceiptState, Record, Store};
use tenx_engine::wire::{Message, Role};

/// Awkward doubles: the classic sum, tiny and subnormal ones, and values the fast parser reads
/// one unit in the last place off (found by round-tripping random bit patterns).
fn awkward() -> Vec<f64> {
    vec![
        0.1 + 0.2,
        1e-300,
        5e-324,
        2.225_073_858_507_201_4e-308,
        -0.0,
        1.071_566_039_146_582_6e-75,
        -1.819_967_304_027_17e-179,
        -1.603_964_615_428_183e143,
        3.026_199_944_157_320_3e-52,
        -2.145_284_654_012_961_5e-305,
        1_796_083_200.123,
    ]
}

fn bits(value: &Value) -> Vec<u64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|number| number.as_f64().unwrap().to_bits())
        .collect()
}

#[tokio::test]
async fn awkward_floats_read_back_bit_for_bit() {
    let (_dir, path) = temp_file();
    let store = open(&path).await;
    let floats = awkward();
    let expected: Vec<u64> = floats.iter().map(|float| float.to_bits()).collect();
    let mut record = thread("t", None, 1, 1);
    record.state.insert("amounts".into(), json!(floats));
    for float in &floats {
        record
            .context
            .push(Message::text(format!("m{}", float.to_bits()), Role::User, "x", *float).into());
    }
    let mut commit = save(record.clone(), None);
    commit.receipts.push(receipt(
        "t",
        "k",
        ReceiptState::Done {
            result: json!({"amounts": floats}),
            is_error: false,
        },
    ));
    commit.records.push(Record {
        thread_id: "t".into(),
        at: 1,
        kind: "tool_call".into(),
        fields: json!({"amounts": floats}),
    });
    store.commit(commit).await.unwrap();
    store.commit(markers(Vec::new(), Vec::new())).await.unwrap();
    drop(store);

    // A fresh store over the file: nothing comes from a cache.
    let store = open(&path).await;
    let loaded = store.load("t").await.unwrap().unwrap();
    assert_eq!(bits(&loaded.state["amounts"]), expected);
    let timestamps: Vec<u64> = loaded
        .context
        .iter()
        .map(|message| message.timestamp.to_bits())
        .collect();
    assert_eq!(timestamps, expected);
    assert_eq!(loaded, record);
    assert_eq!(
        serde_json::to_vec(&loaded).unwrap(),
        serde_json::to_vec(&record).unwrap(),
        "the checkpoint reads back byte-identical"
    );
    let Some(ReceiptState::Done { result, .. }) = store.receipt("t", "k").await.unwrap().map(|r| r.state) else {
        panic!("the receipt is done");
    };
    assert_eq!(bits(&result["amounts"]), expected);
    let records = store.records("t").await.unwrap();
    assert_eq!(bits(&records[0].fields["amounts"]), expected);
}
