//! The two-replica scenarios, each written once against a [`Backend`]: a pause answered on the
//! other replica, concurrent answers through both, and a replica killed mid-call.

use std::time::{Duration, Instant};

use super::api;
use super::cluster::{Backend, Cluster, LEASE_TTL};
use super::replica::within;

/// How many times the concurrent answers race.
const RACES: u32 = 20;

pub async fn pause_on_a_answer_on_b(backend: Backend) {
    let cluster = Cluster::new(backend);
    let (a, b) = (cluster.replica().await, cluster.replica().await);
    let key = api::order_key(1042);

    let (status, paused) = api::start(&a.base, "moved", 1042).await.unwrap();
    assert_eq!(status, 200, "{paused}");
    assert_eq!(api::status(&paused), "interrupted_before", "{paused}");
    let interrupt = api::interrupt_id(&paused).unwrap();

    // B reads the pause A made from the shared store.
    let (status, seen) = api::state(&b.base, "moved").await.unwrap();
    assert_eq!(status, 200, "{seen}");
    assert_eq!(api::interrupt_id(&seen).as_deref(), Some(interrupt.as_str()), "{seen}");
    assert_eq!(
        cluster.payments.requests(&key),
        0,
        "nothing refunded before the approval"
    );

    // The answer is bound to the question: another id is refused on B, and nothing runs.
    let (status, refused) = api::approve(&b.base, "moved", "int_00000000000000000000000000000000")
        .await
        .unwrap();
    assert_eq!(status, 409, "{refused}");
    assert_eq!(api::code(&refused), "INTERRUPT_001", "{refused}");

    let (status, done) = api::approve(&b.base, "moved", &interrupt).await.unwrap();
    assert_eq!(status, 200, "{done}");
    assert_eq!(api::status(&done), "completed", "{done}");
    assert_eq!(cluster.payments.requests(&key), 1);
    assert_eq!(cluster.payments.refunds("1042"), 1);

    // A sees B's ending; answering again is refused on both, and nothing is refunded again.
    let (status, state) = api::state(&a.base, "moved").await.unwrap();
    assert_eq!(status, 200, "{state}");
    assert_eq!(api::status(&state), "completed", "{state}");
    assert_eq!(
        api::last_text(&state),
        "Refunded 5900 cents on order 1042 (refund 1).",
        "{state}"
    );
    assert_eq!(api::tool_results(&state).len(), 1, "{state}");
    for replica in [&a, &b] {
        let (status, again) = api::approve(&replica.base, "moved", &interrupt).await.unwrap();
        assert_eq!(status, 409, "{again}");
        assert_eq!(api::code(&again), "INTERRUPT_003", "{again}");
    }
    assert_eq!(cluster.payments.requests(&key), 1);
    assert_eq!(cluster.payments.refunds("1042"), 1);
}

pub async fn concurrent_answers(backend: Backend) {
    let cluster = Cluster::new(backend);
    let (a, b) = (cluster.replica().await, cluster.replica().await);
    let mut wins = [0_u32; 2];
    for race in 0..RACES {
        let order = 2000 + race;
        let key = api::order_key(order);
        let thread = format!("race-{race}");
        let asker = if race % 2 == 0 { &a } else { &b };
        let (status, paused) = api::start(&asker.base, &thread, order).await.unwrap();
        assert_eq!(status, 200, "{paused}");
        let interrupt = api::interrupt_id(&paused).unwrap();
        // In odd races the stand-in holds the refund, so whichever answer loses is provably
        // waiting for the thread while the winner's call is in flight.
        let held = race % 2 == 1;
        if held {
            cluster.payments.hold(&key);
        }
        let answer = |base: String| {
            let (thread, interrupt) = (thread.clone(), interrupt.clone());
            tokio::spawn(async move {
                let answer = api::approve(&base, &thread, &interrupt).await.unwrap();
                (answer, Instant::now())
            })
        };
        let through = [answer(a.base.clone()), answer(b.base.clone())];
        let released = if held {
            let (payments, held) = (&cluster.payments, &key);
            let arrived = within(Duration::from_secs(60), || async move { payments.requests(held) == 1 }).await;
            assert!(arrived, "race {race}: the refund never reached the stand-in");
            tokio::time::sleep(Duration::from_millis(200)).await;
            let released = Instant::now();
            cluster.payments.release(&key);
            Some(released)
        } else {
            None
        };
        let mut answers = Vec::new();
        for call in through {
            answers.push(call.await.unwrap());
        }
        let winners: Vec<usize> = (0..2).filter(|&side| answers[side].0.0 == 200).collect();
        assert_eq!(winners.len(), 1, "race {race}: exactly one answer wins: {answers:?}");
        let (winner, loser) = (winners[0], 1 - winners[0]);
        wins[winner] += 1;
        let ((_, won), _) = &answers[winner];
        assert_eq!(api::status(won), "completed", "race {race}: {won}");
        let ((status, lost), lost_at) = &answers[loser];
        assert_eq!(*status, 409, "race {race}: {lost}");
        assert_eq!(api::code(lost), "INTERRUPT_003", "race {race}: {lost}");
        if let Some(released) = released {
            assert!(
                *lost_at > released,
                "race {race}: the losing answer came back before the winner's call ended"
            );
        }
        assert_eq!(cluster.payments.requests(&key), 1, "race {race}: the refund ran once");
        assert_eq!(cluster.payments.refunds(&order.to_string()), 1, "race {race}");
    }
    println!(
        "{RACES} races of two answers to one question: A won {}, B won {}; every loser got 409 INTERRUPT_003, every refund ran once",
        wins[0], wins[1]
    );
}

pub async fn killed_mid_call(backend: Backend) {
    let cluster = Cluster::new(backend);
    let (a, b) = (cluster.replica().await, cluster.replica().await);
    let key = api::order_key(3042);
    let (status, paused) = api::start(&a.base, "orphan", 3042).await.unwrap();
    assert_eq!(status, 200, "{paused}");
    let interrupt = api::interrupt_id(&paused).unwrap();

    // A takes the answer and sends the refund; the stand-in applies it and holds the answer.
    cluster.payments.hold(&key);
    let (base, id) = (a.base.clone(), interrupt.clone());
    let answering = tokio::spawn(async move { api::approve(&base, "orphan", &id).await });
    let (payments, held) = (&cluster.payments, &key);
    let arrived = within(Duration::from_secs(60), || async move { payments.requests(held) == 1 }).await;
    assert!(arrived, "the refund never reached the stand-in");
    let (status, mid) = api::state(&b.base, "orphan").await.unwrap();
    assert_eq!(status, 200, "{mid}");
    assert_eq!(api::status(&mid), "running", "mid-run, as B reads it: {mid}");
    assert_eq!(api::interrupt_id(&mid), None, "{mid}");

    let killed = Instant::now();
    a.kill();
    let answer = answering.await.unwrap();
    assert!(answer.is_err(), "the killed replica answered: {answer:?}");
    cluster.payments.release(&key);

    // B's recovery sweep takes the thread once A's lease expired, and finishes the call.
    let deadline = Instant::now() + Duration::from_secs(60);
    let last = loop {
        let (_, state) = api::state(&b.base, "orphan").await.unwrap();
        if api::status(&state) == "completed" {
            break state;
        }
        assert!(Instant::now() < deadline, "B never finished the run A left: {state}");
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    let took = killed.elapsed();
    assert_eq!(
        api::last_text(&last),
        "Refunded 5900 cents on order 3042 (refund 1).",
        "{last}"
    );
    assert_eq!(api::tool_results(&last).len(), 1, "{last}");
    assert_eq!(cluster.payments.requests(&key), 2, "the same key, sent again by B");
    assert_eq!(cluster.payments.refunds("3042"), 1, "refunded once");
    let (status, again) = api::approve(&b.base, "orphan", &interrupt).await.unwrap();
    assert_eq!(status, 409, "{again}");
    assert_eq!(api::code(&again), "INTERRUPT_003", "{again}");
    println!(
        "kill -9 of A mid-call: B finished the run {:.2} s later (lease {} s), the key was sent twice, the order refunded once",
        took.as_secs_f64(),
        LEASE_TTL.as_secs()
    );
}
