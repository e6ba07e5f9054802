//! A TCP proxy on loopback between one zone and its PostgreSQL server, which the fleet's
//! nemesis cuts (every connection closed, new ones closed at once) and heals: a zone cut off
//! from the database, while the database and the other zones go on.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running proxy; it lives as long as the process.
pub(crate) struct Proxy {
    pub(crate) port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `target` (`host:port`).
    pub(crate) fn start(target: String) -> Result<Proxy, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (c, o) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if c.load(Ordering::Acquire) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let _ = server.set_nodelay(true);
                let _ = client.set_nodelay(true);
                if let Ok(mut list) = o.lock() {
                    list.retain(|s: &TcpStream| s.peer_addr().is_ok());
                    list.extend(
                        [client.try_clone(), server.try_clone()]
                            .into_iter()
                            .flatten(),
                    );
                }
                pipe(&client, &server);
                pipe(&server, &client);
            }
        });
        Ok(Proxy { port, cut, open })
    }

    /// Cuts the zone off: closes its connections, and every new one at once, until `heal`.
    pub(crate) fn cut(&self) {
        self.cut.store(true, Ordering::Release);
        if let Ok(mut list) = self.open.lock() {
            for s in list.drain(..) {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }

    pub(crate) fn heal(&self) {
        self.cut.store(false, Ordering::Release);
    }
}

/// Copies `from` to `to` on a thread of its own until either end closes.
fn pipe(from: &TcpStream, to: &TcpStream) {
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let _ = from.set_read_timeout(Some(Duration::from_secs(3600)));
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 || to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}

/// `url` with its one `host:port` replaced by the proxy on `port`, and that `host:port`;
/// `None` for a URL with several hosts or none.
pub(crate) fn through(url: &str, port: u16) -> Option<(String, String)> {
    let at = url.find('@')? + 1;
    let end = at + url[at..].find('/')?;
    let host = &url[at..end];
    if host.contains(',') || host.is_empty() {
        return None;
    }
    let target = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:5432")
    };
    Some((
        format!("{}127.0.0.1:{port}{}", &url[..at], &url[end..]),
        target,
    ))
}
