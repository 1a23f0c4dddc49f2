//! One feed's body to headlines, parsed with feed-rs (RSS 0.x/1.0/2.0, Atom, JSON Feed). Only
//! items a reader can open are kept: a non-empty title and an http(s) link.

use feed_rs::model::Entry;
use reqwest::Url;

use super::{NewsItem, SourceError};

/// Longest parser reason kept in an error (errors are returned by the API).
const MAX_REASON_CHARS: usize = 200;

/// The first `max_items` valid items of the feed at `url`, in the feed's order.
pub fn headlines(body: &[u8], url: &str, max_items: usize) -> Result<Vec<NewsItem>, SourceError> {
    // The base resolves relative links (Atom allows them) against the feed's address.
    let parser = feed_rs::parser::Builder::new().base_uri(Some(url)).build();
    let feed = parser.parse(body).map_err(|err| {
        SourceError::NotAFeed(err.to_string().chars().take(MAX_REASON_CHARS).collect())
    })?;
    let source = feed
        .title
        .map(|title| one_line(&title.content))
        .filter(|title| !title.is_empty())
        .or_else(|| Url::parse(url).ok()?.host_str().map(str::to_string))
        .unwrap_or_else(|| url.to_string());
    let items: Vec<NewsItem> = feed
        .entries
        .iter()
        .filter_map(|entry| {
            let title = entry.title.as_ref().map(|t| one_line(&t.content))?;
            let link = link_of(entry)?;
            (!title.is_empty()).then(|| NewsItem { title, url: link, source: source.clone() })
        })
        .take(max_items)
        .collect();
    if items.is_empty() { Err(SourceError::NoValidItems) } else { Ok(items) }
}

/// The item's page: its first readable link (no `rel`, or `alternate`) that is http(s), else
/// an RSS `guid` that is such a URL (RSS 2.0: a guid is a permalink unless marked otherwise).
fn link_of(entry: &Entry) -> Option<String> {
    entry
        .links
        .iter()
        .filter(|link| matches!(link.rel.as_deref(), None | Some("alternate")))
        .map(|link| link.href.as_str())
        .chain(std::iter::once(entry.id.as_str()))
        .find_map(web_url)
}

fn web_url(text: &str) -> Option<String> {
    let url = Url::parse(text.trim()).ok()?;
    let web = matches!(url.scheme(), "http" | "https") && url.host_str().is_some();
    web.then(|| url.to_string())
}

/// Titles often carry line breaks and indentation from the XML; headlines are one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://feeds.example/rss";

    fn rss(items: &str) -> String {
        format!(
            "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>Coin Wire</title>\
             <link>https://coinwire.example</link><description>d</description>{items}\
             </channel></rss>"
        )
    }

    #[test]
    fn rss_items_keep_title_link_and_the_feed_title_as_source() {
        let body = rss("<item><title>  Bitcoin\n   rallies </title>\
                        <link>https://coinwire.example/a</link></item>\
                        <item><title>Ether &amp; gas</title><link>http://coinwire.example/b</link></item>");
        let items = headlines(body.as_bytes(), URL, 20).unwrap();
        assert_eq!(
            items,
            vec![
                NewsItem {
                    title: "Bitcoin rallies".into(),
                    url: "https://coinwire.example/a".into(),
                    source: "Coin Wire".into(),
                },
                NewsItem {
                    title: "Ether & gas".into(),
                    url: "http://coinwire.example/b".into(),
                    source: "Coin Wire".into(),
                },
            ]
        );
    }

    #[test]
    fn items_without_title_or_web_link_are_left_out_and_max_items_caps() {
        let body = rss("<item><title></title><link>https://coinwire.example/a</link></item>\
                        <item><title>No link</title></item>\
                        <item><title>Mail</title><link>mailto:x@coinwire.example</link></item>\
                        <item><title>Guid</title><guid>https://coinwire.example/g</guid></item>\
                        <item><title>One</title><link>https://coinwire.example/1</link></item>\
                        <item><title>Two</title><link>https://coinwire.example/2</link></item>");
        let items = headlines(body.as_bytes(), URL, 2).unwrap();
        let titles: Vec<&str> = items.iter().map(|i| i.title.as_str()).collect();
        assert_eq!(titles, ["Guid", "One"]);
        assert_eq!(items[0].url, "https://coinwire.example/g");
    }

    #[test]
    fn atom_without_a_feed_title_names_the_host_and_resolves_relative_links() {
        let body = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\
            <feed xmlns=\"http://www.w3.org/2005/Atom\"><id>urn:x</id><updated>2026-01-01T00:00:00Z</updated>\
            <entry><title>Solana upgrade</title><id>urn:1</id><updated>2026-01-01T00:00:00Z</updated>\
            <link rel=\"enclosure\" href=\"https://cdn.example/a.mp3\"/>\
            <link rel=\"alternate\" href=\"/posts/1\"/></entry></feed>";
        let items = headlines(body.as_bytes(), "https://atom.example/feed.xml", 20).unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].url, "https://atom.example/posts/1");
        assert_eq!(items[0].source, "atom.example");
    }

    #[test]
    fn invalid_xml_is_not_a_feed_and_an_empty_feed_has_no_valid_items() {
        for body in ["this is not a feed", "<html><body>Just a moment...</body></html>", ""] {
            let err = headlines(body.as_bytes(), URL, 20).unwrap_err();
            assert!(matches!(err, SourceError::NotAFeed(_)), "{body:?}: {err:?}");
        }
        let err = headlines(rss("<item><title>x</title></item>").as_bytes(), URL, 20).unwrap_err();
        assert_eq!(err, SourceError::NoValidItems);
    }
}
