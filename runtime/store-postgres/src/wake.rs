//! Waking lock waiters across replicas: a released lease sends `NOTIFY tenx_leases` with the
//! schema as payload (in the statement that deletes the row, so it is delivered when the delete
//! commits), and every store keeps one connection of its own (outside the pool) that `LISTEN`s
//! and wakes its waiters at once. Polling every `lease_poll` stays as the fallback: for expired
//! leases (a crashed holder sends nothing) and while the listening connection is down; it is
//! re-established every second, waking the waiters each time in case a release was missed.
//!
//! The same connection `LISTEN`s for stop notices ([`crate::stops::CHANNEL`]) and hands them to
//! the store's [`Stops`]. It is made with the pool's TLS connector ([`Connector`]), so it is
//! encrypted and checked exactly as the pooled connections are.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
use tokio_postgres::AsyncMessage;

use crate::stops::Stops;
use crate::tls::Connector;

/// The channel every tenx store notifies and listens on; the payload names the schema.
pub(crate) const CHANNEL: &str = "tenx_leases";

/// Starts the listener of `schema`'s releases, waking `wake`'s waiters, and of stop notices,
/// handed to `stops`; returns once it listens
/// (or after `wait`, polling alone until it does), with the task to abort when the store goes.
pub(crate) async fn start(
    config: tokio_postgres::Config,
    tls: Connector,
    schema: String,
    wake: Arc<Notify>,
    stops: Arc<Stops>,
    wait: Duration,
) -> JoinHandle<()> {
    let (ready, listening) = oneshot::channel();
    let task = tokio::spawn(async move {
        let mut ready = Some(ready);
        loop {
            let _ended = listen(&config, &tls, &schema, &wake, &stops, &mut ready).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let _listening = tokio::time::timeout(wait, listening).await;
    task
}

/// One listening connection, until it fails.
async fn listen(
    config: &tokio_postgres::Config,
    tls: &Connector,
    schema: &str,
    wake: &Notify,
    stops: &Arc<Stops>,
    ready: &mut Option<oneshot::Sender<()>>,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(tls.make()).await?;
    let (send, mut payloads) = tokio::sync::mpsc::unbounded_channel();
    // The connection must be polled for the client to make progress; notifications arrive there.
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(notification))) => {
                    let heard = (notification.channel().to_owned(), notification.payload().to_owned());
                    if send.send(heard).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    });
    let listened = client
        .batch_execute(&format!("LISTEN {CHANNEL}; LISTEN {}", crate::stops::CHANNEL))
        .await;
    if let Err(error) = listened {
        driver.abort();
        return Err(error);
    }
    if let Some(ready) = ready.take() {
        let _told = ready.send(());
    }
    // A release may have gone unheard while not listening.
    wake.notify_waiters();
    while let Some((channel, payload)) = payloads.recv().await {
        if channel == crate::stops::CHANNEL {
            stops.received(&payload);
        } else if payload == schema {
            wake.notify_waiters();
        }
    }
    drop(client);
    Ok(())
}
