//! WebFetch (a page as markdown) and WebSearch (a configured provider's
//! results). Both read from the network, so both ask per host outside
//! `auto_all` ([`ToolKind::Network`]); neither changes anything.
//!
//! WebFetch follows redirects only within the host that was approved: a
//! redirect elsewhere is reported for the model to fetch (and the user to
//! approve) itself. Hosts that resolve to loopback, private or link-local
//! addresses are refused unless configured, and the address that was checked
//! is the one connected to, so a second lookup cannot swap it.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ToolContext, ToolError, ToolKind, ToolOutput, ToolSet, TypedTool};
use crate::config::{SearchProvider, SearchSettings, WebSettings};

/// Redirects within one host followed at most.
const MAX_REDIRECTS: usize = 5;
/// Characters of a converted page returned at most.
const MAX_PAGE_CHARS: usize = 60_000;
/// Search results returned by default and at most.
const DEFAULT_RESULTS: usize = 8;
const MAX_RESULTS: usize = 20;
const BRAVE_API: &str = "https://api.search.brave.com";

fn user_agent() -> String {
    format!("tack/{} (coding agent)", env!("CARGO_PKG_VERSION"))
}

pub struct WebFetch {
    pub settings: WebSettings,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchInput {
    /// The page's address, http or https.
    url: String,
}

/// The host a URL names, for the permission question and rules.
fn host_of(url: &str) -> String {
    Url::parse(url.trim()).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_else(|| url.trim().to_string())
}

#[async_trait]
impl TypedTool for WebFetch {
    type Input = WebFetchInput;
    const NAME: &'static str = "WebFetch";
    const DESCRIPTION: &'static str = "Fetch a web page (http or https) and return it as markdown: documentation, an issue, a changelog. A redirect to another host is reported, not followed.";
    const KIND: ToolKind = ToolKind::Network;
    const SET: ToolSet = ToolSet::Web;

    fn paths(_: &WebFetchInput) -> Vec<String> {
        Vec::new()
    }

    fn command(input: &WebFetchInput) -> Option<String> {
        Some(host_of(&input.url))
    }

    async fn call(&self, input: WebFetchInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let timeout = Duration::from_millis(self.settings.timeout_ms);
        tokio::select! {
            result = tokio::time::timeout(timeout, self.fetch(input.url.trim())) => match result {
                Ok(result) => result,
                Err(_) => Err(ToolError::Invalid(format!("{} took longer than {} ms; nothing was read", input.url.trim(), timeout.as_millis()))),
            },
            _ = ctx.cancel.cancelled() => Err(ToolError::Invalid("cancelled".into())),
        }
    }
}

impl WebFetch {
    async fn fetch(&self, address: &str) -> Result<ToolOutput, ToolError> {
        let invalid = |message: String| ToolError::Invalid(message);
        let mut url = Url::parse(address).map_err(|e| invalid(format!("`{address}` is not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(format!("only http and https pages can be fetched, not {}:", url.scheme())));
        }
        let host = url.host_str().ok_or_else(|| invalid(format!("{address} names no host")))?.to_string();
        let mut redirects = 0;
        let response = loop {
            let client = self.client_for(&url).await?;
            let response = client
                .get(url.clone())
                .send()
                .await
                .map_err(|e| invalid(format!("cannot fetch {url}: {}", without_url(&e))))?;
            if !response.status().is_redirection() {
                break response;
            }
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok())
                .ok_or_else(|| invalid(format!("{url} redirects ({}) without a usable Location", response.status())))?;
            if location.host_str() != Some(host.as_str()) {
                let text = format!(
                    "{url} redirects ({}) to {location}, on another host; not followed. Fetch that URL to follow it.",
                    response.status()
                );
                return Ok(ToolOutput::ok(text, format!("{url} redirects to another host")));
            }
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                return Err(invalid(format!("{address} redirects more than {MAX_REDIRECTS} times")));
            }
            url = location;
        };
        let status = response.status();
        if !status.is_success() {
            return Err(invalid(format!("{url} answered {status}")));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let (body, cut) = read_capped(response, self.settings.max_page_bytes).await?;
        let is_html = content_type.contains("html") || (content_type.is_empty() && looks_like_html(&body));
        let is_text = is_html
            || content_type.starts_with("text/")
            || content_type.contains("json")
            || content_type.contains("xml")
            || (content_type.is_empty() && !body.contains(&0));
        if !is_text {
            return Err(invalid(format!("{url} is {content_type}, not a page that can be read as text")));
        }
        let text = String::from_utf8_lossy(&body);
        let mut page = if is_html { to_markdown(&text) } else { text.into_owned() };
        let mut notes = Vec::new();
        if cut {
            notes.push(format!("only the first {} bytes of the page were read", self.settings.max_page_bytes));
        }
        if page.chars().count() > MAX_PAGE_CHARS {
            let end = page.char_indices().nth(MAX_PAGE_CHARS).map_or(page.len(), |(i, _)| i);
            page.truncate(end);
            notes.push(format!("the text was cut at {MAX_PAGE_CHARS} characters"));
        }
        let mut output = format!("# {url}\n");
        if !notes.is_empty() {
            output.push_str(&format!("({})\n", notes.join("; ")));
        }
        output.push('\n');
        output.push_str(page.trim());
        output.push('\n');
        let summary = format!("fetched {url} ({} characters)", page.chars().count());
        Ok(ToolOutput::ok(output, summary))
    }

    /// A client that connects to `url`'s host only at an address that was
    /// checked, and follows no redirects by itself.
    async fn client_for(&self, url: &Url) -> Result<reqwest::Client, ToolError> {
        let host = url.host_str().unwrap_or_default().to_string();
        let port = url.port_or_known_default().unwrap_or(80);
        let bare = host.trim_start_matches('[').trim_end_matches(']').to_string();
        let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((bare.as_str(), port))
                .await
                .map_err(|e| ToolError::Invalid(format!("cannot find the host {host}: {e}")))?
                .collect(),
        };
        let address = addresses.first().copied().ok_or_else(|| ToolError::Invalid(format!("{host} has no address")))?;
        if !self.settings.allow_private_hosts {
            if let Some(private) = addresses.iter().find(|a| !is_public(a.ip())) {
                return Err(ToolError::Invalid(format!(
                    "{host} is at {}, a loopback, private or link-local address; tack does not fetch from the \
                     local network unless tools.web.allow_private_hosts is set",
                    private.ip()
                )));
            }
        }
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the host itself, past the check above.
            .no_proxy()
            .resolve(&bare, address)
            .user_agent(user_agent())
            .build()
            .map_err(|e| ToolError::Invalid(format!("cannot make an HTTP client: {e}")))
    }
}

/// A reqwest error without the URL it repeats.
fn without_url(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    if let Some(url) = error.url() {
        text = text.replace(&format!(" ({url})"), "").replace(&format!(" for url ({url})"), "");
    }
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    text
}

async fn read_capped(response: reqwest::Response, limit: u64) -> Result<(Vec<u8>, bool), ToolError> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ToolError::Invalid(format!("the page broke off: {}", without_url(&e))))?;
        let room = (limit as usize).saturating_sub(body.len());
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

fn looks_like_html(body: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    head.contains("<!doctype html") || head.contains("<html")
}

fn to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec!["script", "style", "noscript", "svg", "iframe", "head", "nav", "footer"])
        .build();
    converter.convert(html).unwrap_or_else(|_| html.to_string())
}

/// Whether an address is on the public internet.
fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || (a == 100 && (64..128).contains(&b)))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
    }
}

pub struct WebSearch {
    pub settings: WebSettings,
    pub search: SearchSettings,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchInput {
    /// What to search for.
    query: String,
    /// How many results (default 8, at most 20).
    #[schemars(range(min = 1, max = 20))]
    max_results: Option<usize>,
}

impl WebSearch {
    fn base(&self) -> String {
        let default = match self.search.provider {
            SearchProvider::Brave => BRAVE_API,
            SearchProvider::Searxng => "",
        };
        self.search.url.clone().unwrap_or_else(|| default.to_string()).trim_end_matches('/').to_string()
    }
}

#[async_trait]
impl TypedTool for WebSearch {
    type Input = WebSearchInput;
    const NAME: &'static str = "WebSearch";
    const DESCRIPTION: &'static str =
        "Search the web. Returns titles, URLs and snippets; fetch a result with WebFetch to read it.";
    const KIND: ToolKind = ToolKind::Network;
    const SET: ToolSet = ToolSet::Web;

    fn paths(_: &WebSearchInput) -> Vec<String> {
        Vec::new()
    }

    fn command(_: &WebSearchInput) -> Option<String> {
        None
    }

    async fn call(&self, input: WebSearchInput, ctx: &ToolContext<'_>) -> Result<ToolOutput, ToolError> {
        let query = input.query.trim();
        if query.is_empty() {
            return Err(ToolError::Invalid("the query is empty".into()));
        }
        let count = input.max_results.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS);
        let base = self.base();
        let client = reqwest::Client::builder()
            .user_agent(user_agent())
            .timeout(Duration::from_millis(self.settings.timeout_ms))
            .build()
            .map_err(|e| ToolError::Invalid(format!("cannot make an HTTP client: {e}")))?;
        let request = match self.search.provider {
            SearchProvider::Searxng => client.get(format!("{base}/search")).query(&[("q", query), ("format", "json")]),
            SearchProvider::Brave => {
                let variable = self.search.api_key_env.as_deref().unwrap_or("BRAVE_API_KEY");
                let key = std::env::var(variable).map_err(|_| {
                    ToolError::Invalid(format!("Brave Search needs an API key in the environment variable {variable}"))
                })?;
                client
                    .get(format!("{base}/res/v1/web/search"))
                    .query(&[("q", query), ("count", &count.to_string())])
                    .header("X-Subscription-Token", key)
                    .header(reqwest::header::ACCEPT, "application/json")
            }
        };
        let answer = tokio::select! {
            answer = request.send() => answer,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Invalid("cancelled".into())),
        };
        let response = answer.map_err(|e| ToolError::Invalid(format!("the search failed: {}", without_url(&e))))?;
        if !response.status().is_success() {
            return Err(ToolError::Invalid(format!("the search provider answered {}", response.status())));
        }
        let body: Value = response.json().await.map_err(|e| {
            ToolError::Invalid(format!("the search provider's answer is not JSON: {}", without_url(&e)))
        })?;
        let (list, snippet) = match self.search.provider {
            SearchProvider::Searxng => (body.get("results"), "content"),
            SearchProvider::Brave => (body.pointer("/web/results"), "description"),
        };
        let results: Vec<(String, String, String)> = list
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| {
                let text = |key: &str| r.get(key).and_then(Value::as_str).unwrap_or("").trim().to_string();
                let url = text("url");
                (!url.is_empty()).then(|| (text("title"), url, strip_tags(&text(snippet))))
            })
            .take(count)
            .collect();
        if results.is_empty() {
            return Ok(ToolOutput::ok(format!("no results for `{query}`"), format!("no results for {query}")));
        }
        let mut output = String::new();
        for (number, (title, url, snippet)) in results.iter().enumerate() {
            output.push_str(&format!("{}. {title}\n   {url}\n", number + 1));
            if !snippet.is_empty() {
                output.push_str(&format!("   {snippet}\n"));
            }
        }
        Ok(ToolOutput::ok(output, format!("{} results for {query}", results.len())))
    }
}

/// Snippets come with highlighting markup (`<strong>`): plain text is enough.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_of_the_local_network_are_not_public() {
        for private in ["127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.5.4", "169.254.1.1", "100.64.0.1", "0.0.0.0"] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for private in ["::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1"] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn pages_become_markdown_without_their_scripts() {
        let html = "<html><head><title>t</title><script>evil()</script></head><body><h1>Docs</h1><p>Use <code>x()</code>.</p></body></html>";
        let markdown = to_markdown(html);
        assert!(markdown.contains("# Docs") && markdown.contains("`x()`"), "{markdown}");
        assert!(!markdown.contains("evil"), "{markdown}");
        assert_eq!(strip_tags("a <strong>b</strong> c"), "a b c");
    }
}
