//! Reads LSP frames (`Content-Length` header, JSON body) from a stream on its own thread.
//!
//! Not lsp-server's reader: that one ends the connection on the first malformed frame and
//! allocates whatever `Content-Length` claims. Here a bad body is answered with a JSON-RPC
//! error and reading goes on; a frame above [`MAX_FRAME`] is skipped.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::Sender;

use lsp_server::{ErrorCode, Message, RequestId};

use super::Event;

/// The largest message accepted (a whole YAML file fits many times).
pub const MAX_FRAME: usize = 256 * 1024 * 1024;

pub fn spawn_reader(input: impl Read + Send + 'static, events: Sender<Event>) {
    std::thread::spawn(move || {
        let mut input = BufReader::new(input);
        loop {
            let event = match read_frame(&mut input) {
                Frame::Body(body) => parse(&body),
                Frame::Bad(message) => {
                    Event::Malformed(None, ErrorCode::ParseError as i32, message)
                }
                Frame::End => Event::Closed,
            };
            let end = matches!(event, Event::Closed);
            if events.send(event).is_err() || end {
                return;
            }
        }
    });
}

enum Frame {
    Body(Vec<u8>),
    Bad(String),
    End,
}

fn read_frame(input: &mut impl BufRead) -> Frame {
    let mut length: Option<usize> = None;
    let mut saw_header = false;
    loop {
        let mut line = Vec::new();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return Frame::End,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if saw_header {
                break;
            }
            continue;
        }
        saw_header = true;
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().ok();
            }
        }
    }
    let Some(length) = length else {
        return Frame::Bad("missing or invalid Content-Length header".into());
    };
    if length > MAX_FRAME {
        // Skip the body without holding it.
        let skipped = std::io::copy(&mut input.take(length as u64), &mut std::io::sink());
        return match skipped {
            Ok(n) if n == length as u64 => {
                Frame::Bad(format!("message of {length} bytes is too large"))
            }
            _ => Frame::End,
        };
    }
    let mut body = vec![0; length];
    match input.read_exact(&mut body) {
        Ok(()) => Frame::Body(body),
        Err(_) => Frame::End,
    }
}

fn parse(body: &[u8]) -> Event {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Event::Malformed(
                None,
                ErrorCode::ParseError as i32,
                format!("invalid JSON: {e}"),
            );
        }
    };
    let id: Option<RequestId> = value
        .get("id")
        .and_then(|id| serde_json::from_value(id.clone()).ok());
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Event::Message(m),
        Err(e) => Event::Malformed(
            id,
            ErrorCode::InvalidRequest as i32,
            format!("not a JSON-RPC message: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_survive_garbage() {
        let mut input: &[u8] = b"Content-Length: 2\r\n\r\n{}garbage\r\n\r\nContent-Length: 99999999999\r\n\r\nxContent-Length: 3\r\n\r\n[1]";
        assert!(matches!(read_frame(&mut input), Frame::Body(b) if b == b"{}"));
        assert!(matches!(read_frame(&mut input), Frame::Bad(_)));
        // The huge frame is cut short by the end of input.
        assert!(matches!(read_frame(&mut input), Frame::End));
        assert!(matches!(parse(b"{"), Event::Malformed(None, _, _)));
        assert!(matches!(
            parse(br#"{"id": 7, "method": 5}"#),
            Event::Malformed(Some(_), _, _)
        ));
    }
}
