//! A loopback stand-in for the HTTP APIs autocoder calls (GitHub's, the model providers'): a
//! std-only HTTP/1.1 server on 127.0.0.1:0 that serves scripted responses per path (in order, the
//! last one repeating), records every request for the test to assert on, and checks on drop that
//! every scripted path was requested.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// How long to wait before answering (cut short when the server stops).
    pub delay: std::time::Duration,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// `{base}` is replaced by the server's URL (for `Link` headers that point back here).
    pub body: String,
    /// Sends only this many bytes of the body (its whole length announced), then closes.
    pub cut_after: Option<usize>,
}

impl Reply {
    pub(crate) fn json(status: u16, body: &str) -> Reply {
        Reply {
            delay: std::time::Duration::ZERO,
            status,
            headers: Vec::new(),
            body: body.to_string(),
            cut_after: None,
        }
    }

    /// Closes the connection without answering, as if the network failed after the request.
    pub(crate) fn hang_up() -> Reply {
        Reply {
            delay: std::time::Duration::ZERO,
            status: 0,
            headers: Vec::new(),
            body: String::new(),
            cut_after: None,
        }
    }

    /// Closes the connection after `bytes` of the body, as if the network failed mid-answer.
    pub(crate) fn cut_after(mut self, bytes: usize) -> Reply {
        self.cut_after = Some(bytes);
        self
    }

    /// Answers after `delay`.
    pub(crate) fn delayed(mut self, delay: std::time::Duration) -> Reply {
        self.delay = delay;
        self
    }

    pub(crate) fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub method: String,
    /// Path and query.
    pub target: String,
    /// Header names in lower case.
    pub headers: HashMap<String, String>,
    pub body: String,
}

pub(crate) struct FakeServer {
    base: String,
    requests: Arc<Mutex<Vec<Request>>>,
    scripted: Vec<String>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Serves `routes`: "METHOD /path?query" → replies.
    pub(crate) fn start(routes: Vec<(&str, Vec<Reply>)>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let scripted = routes.iter().map(|(k, _)| k.to_string()).collect();
        let routes: HashMap<String, Vec<Reply>> = routes
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let routes = Arc::new(Mutex::new(routes));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (routes, requests, stop, base) =
                (routes.clone(), requests.clone(), stop.clone(), base.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        serve(stream, &routes, &requests, &base, &stop);
                    }
                }
            })
        };
        FakeServer {
            base,
            requests,
            scripted,
            stop,
            thread: Some(thread),
        }
    }

    pub(crate) fn url(&self) -> &str {
        &self.base
    }

    pub(crate) fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.base.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if !std::thread::panicking() {
            let seen: Vec<String> = self
                .requests()
                .iter()
                .map(|r| format!("{} {}", r.method, r.target))
                .collect();
            for route in &self.scripted {
                assert!(
                    seen.contains(route),
                    "the fake server was never asked for {route}; it saw {seen:?}"
                );
            }
        }
    }
}

fn serve(
    stream: TcpStream,
    routes: &Mutex<HashMap<String, Vec<Reply>>>,
    requests: &Mutex<Vec<Request>>,
    base: &str,
    stop: &AtomicBool,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("").to_string();
    let mut headers = HashMap::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let key = format!("{method} {target}");
    let body = String::from_utf8_lossy(&body).into_owned();
    requests.lock().unwrap().push(Request {
        method,
        target,
        headers,
        body,
    });
    let reply = {
        let mut routes = routes.lock().unwrap();
        match routes.get_mut(&key) {
            Some(replies) if replies.len() > 1 => replies.remove(0),
            Some(replies) => replies[0].clone(),
            None => Reply::json(404, r#"{"message": "Not Found"}"#),
        }
    };
    let until = std::time::Instant::now() + reply.delay;
    while std::time::Instant::now() < until && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if reply.status == 0 {
        return;
    }
    let body = reply.body.replace("{base}", base);
    let mut response = format!(
        "HTTP/1.1 {} Fake\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        body.len()
    );
    for (name, value) in &reply.headers {
        response.push_str(&format!("{name}: {}\r\n", value.replace("{base}", base)));
    }
    response.push_str("\r\n");
    response.push_str(&body[..reply.cut_after.unwrap_or(body.len()).min(body.len())]);
    let mut stream = stream;
    let _ = stream.write_all(response.as_bytes());
}
