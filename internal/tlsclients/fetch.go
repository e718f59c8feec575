package tlsclients

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Request is what [Client.Fetch] fetches: each URL in order, with the
// User-Agent UA and the further headers Header, over the HTTP version
// Proto ("h1" or "h2"; the client's Protos list which it speaks), on one
// connection where the client keeps connections alive.
type Request struct {
	URLs   []string
	UA     string
	Header [][2]string
	Proto  string
}

// Response is one answer a client got, as it saw it.
type Response struct {
	URL    string
	Status int
	Proto  string // the HTTP version the client names: "1.1", "2"
	Header http.Header
	Body   string
}

// Fetch makes the requests of r with the client's own HTTP stack and
// returns its answers, one per URL, in order. dir is a scratch directory
// of its own.
func (c *Client) Fetch(ctx context.Context, ca *CA, dir string, r Request) ([]Response, error) {
	if c.fetch == nil || !slices.Contains(c.Protos, r.Proto) {
		return nil, fmt.Errorf("%s cannot fetch over %q", c.Name, r.Proto)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	got, err := c.fetch(ctx, ca, dir, r)
	if err != nil {
		return got, err
	}
	if len(got) != len(r.URLs) {
		return got, fmt.Errorf("%s: %d answers to %d requests", c.Name, len(got), len(r.URLs))
	}
	for i := range got {
		got[i].URL = r.URLs[i]
		got[i].Proto = strings.TrimSuffix(got[i].Proto, ".0")
	}
	return got, nil
}

// fetchScript runs a program that is given the request as JSON (its last
// argument) and prints one JSON line per answer: {"status", "proto",
// "headers" (name to a value or a list of values), "body"}.
func fetchScript(ctx context.Context, ca *CA, dir string, r Request, name string, args ...string) ([]Response, error) {
	header := r.Header
	if header == nil {
		header = [][2]string{}
	}
	spec, _ := json.Marshal(map[string]any{"urls": r.URLs, "ua": r.UA, "headers": header, "proto": r.Proto})
	cmd := exec.CommandContext(ctx, name, append(args, string(spec))...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "SSL_CERT_FILE="+ca.CAFile, "REQUESTS_CA_BUNDLE="+ca.CAFile, "NODE_EXTRA_CA_CERTS="+ca.CAFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %s", name, err, lastLines(stderr.String(), 12))
	}
	return readAnswers(bytes.NewReader(out))
}

// readAnswers reads the JSON lines of fetchScript.
func readAnswers(in io.Reader) ([]Response, error) {
	var got []Response
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var a struct {
			Status  int                        `json:"status"`
			Proto   string                     `json:"proto"`
			Headers map[string]json.RawMessage `json:"headers"`
			Body    string                     `json:"body"`
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return got, fmt.Errorf("an answer that is no JSON: %v: %.200s", err, sc.Text())
		}
		h := http.Header{}
		for k, raw := range a.Headers {
			var one string
			var many []string
			if json.Unmarshal(raw, &one) == nil {
				h.Add(k, one)
			} else if json.Unmarshal(raw, &many) == nil {
				for _, v := range many {
					h.Add(k, v)
				}
			}
		}
		got = append(got, Response{Status: a.Status, Proto: strings.TrimPrefix(strings.TrimPrefix(a.Proto, "HTTP/"), "http/"), Header: h, Body: a.Body})
	}
	return got, sc.Err()
}

// curlFetch gets every URL in one curl run (one connection), each body to
// a file of its own, the status, version and headers written after each.
func curlFetch(ctx context.Context, ca *CA, dir string, r Request) ([]Response, error) {
	args := []string{"-sS", "--cacert", ca.CAFile, "-A", r.UA, "--http1.1",
		"-w", `{"status":%{response_code},"proto":"%{http_version}","headers":%{header_json}}` + "\x1e"}
	if r.Proto == "h2" {
		args[5] = "--http2"
	}
	for _, h := range r.Header {
		args = append(args, "-H", h[0]+": "+h[1])
	}
	for i, u := range r.URLs {
		args = append(args, u, "-o", filepath.Join(dir, "body"+strconv.Itoa(i)))
	}
	cmd := exec.CommandContext(ctx, "curl", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("curl: %v", err)
	}
	// header_json spans lines: each answer ends with a record separator.
	out = bytes.ReplaceAll(bytes.ReplaceAll(out, []byte("\n"), nil), []byte("\x1e"), []byte("\n"))
	got, err := readAnswers(bytes.NewReader(out))
	for i := range got {
		body, _ := os.ReadFile(filepath.Join(dir, "body"+strconv.Itoa(i)))
		got[i].Body = string(body)
	}
	return got, err
}

// wgetFetch runs wget once per URL (it keeps no connection across runs),
// saving the answer's headers with its body, error pages included.
func wgetFetch(ctx context.Context, ca *CA, dir string, r Request) ([]Response, error) {
	var got []Response
	for i, u := range r.URLs {
		file := filepath.Join(dir, "answer"+strconv.Itoa(i))
		args := []string{"-q", "--save-headers", "--content-on-error", "--tries=1", "-O", file, "--ca-certificate=" + ca.CAFile, "-U", r.UA}
		for _, h := range r.Header {
			args = append(args, "--header="+h[0]+": "+h[1])
		}
		// wget exits 8 when the server answers with an error status.
		if err := exec.CommandContext(ctx, "wget", append(args, u)...).Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 8 {
				return got, fmt.Errorf("wget %s: %v", u, err)
			}
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return got, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
		if err != nil {
			return got, fmt.Errorf("wget %s: the saved answer: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		got = append(got, Response{Status: resp.StatusCode, Proto: fmt.Sprintf("%d.%d", resp.ProtoMajor, resp.ProtoMinor), Header: resp.Header, Body: string(body)})
	}
	return got, nil
}

// goFetch is Go's net/http, over HTTP/2 (ALPN) or HTTP/1.1 only.
func goFetch(ctx context.Context, ca *CA, _ string, r Request) ([]Response, error) {
	tr := &http.Transport{TLSClientConfig: ca.TLSClientConfig(), ForceAttemptHTTP2: r.Proto == "h2"}
	if r.Proto == "h1" {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	defer tr.CloseIdleConnections()
	var got []Response
	for _, u := range r.URLs {
		req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
		if err != nil {
			return got, err
		}
		req.Header.Set("User-Agent", r.UA)
		for _, h := range r.Header {
			req.Header.Add(h[0], h[1])
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return got, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return got, err
		}
		got = append(got, Response{Status: resp.StatusCode, Proto: fmt.Sprintf("%d.%d", resp.ProtoMajor, resp.ProtoMinor), Header: resp.Header, Body: string(body)})
	}
	return got, nil
}

// The scripts of the other clients: each reads the request (JSON) from
// its last argument and prints one JSON line per answer.
const (
	pyUrllibFetch = `import sys, json, urllib.request, urllib.error
spec = json.loads(sys.argv[-1])
for u in spec["urls"]:
    req = urllib.request.Request(u, headers=dict([["User-Agent", spec["ua"]]] + spec["headers"]))
    try:
        r = urllib.request.urlopen(req)
    except urllib.error.HTTPError as e:
        r = e
    body = r.read().decode("utf-8", "replace")
    print(json.dumps({"status": r.getcode(), "proto": "1.1", "headers": dict(r.headers.items()), "body": body}), flush=True)`
	pyRequestsFetch = `import sys, json, requests
spec = json.loads(sys.argv[-1])
s = requests.Session()
s.headers.update(dict([["User-Agent", spec["ua"]]] + spec["headers"]))
for u in spec["urls"]:
    r = s.get(u)
    print(json.dumps({"status": r.status_code, "proto": "%d.%d" % divmod(r.raw.version, 10), "headers": dict(r.headers), "body": r.text}), flush=True)`
	pyHttpxFetch = `import sys, json, httpx
spec = json.loads(sys.argv[-1])
h2 = spec["proto"] == "h2"
with httpx.Client(http1=not h2, http2=h2, headers=dict([["User-Agent", spec["ua"]]] + spec["headers"])) as c:
    for u in spec["urls"]:
        r = c.get(u)
        print(json.dumps({"status": r.status_code, "proto": r.http_version, "headers": dict(r.headers), "body": r.text}), flush=True)`
	pyAiohttpFetch = `import sys, json, asyncio, aiohttp
spec = json.loads(sys.argv[-1])
async def main():
    async with aiohttp.ClientSession(headers=dict([["User-Agent", spec["ua"]]] + spec["headers"])) as s:
        for u in spec["urls"]:
            async with s.get(u) as r:
                body = await r.text()
                print(json.dumps({"status": r.status, "proto": "%d.%d" % tuple(r.version), "headers": dict(r.headers), "body": body}), flush=True)
asyncio.run(main())`
	// Scrapy fetches one URL at a time, in order (priorities), repeats
	// included, with no retries (it retries a 429 by default) and without
	// robots.txt.
	scrapyFetch = `import json, sys, scrapy
from scrapy.crawler import CrawlerProcess
spec = json.loads(sys.argv[-1])
class Fetch(scrapy.Spider):
    name = "fetch"
    def start_requests(self):
        for i, u in enumerate(spec["urls"]):
            yield scrapy.Request(u, headers=dict(spec["headers"]), priority=-i, dont_filter=True, meta={"handle_httpstatus_all": True})
    def parse(self, r):
        print(json.dumps({"status": r.status, "proto": r.protocol or "HTTP/1.1", "headers": {k.decode(): r.headers.get(k).decode() for k in r.headers}, "body": r.text}), flush=True)
p = CrawlerProcess({"USER_AGENT": spec["ua"], "ROBOTSTXT_OBEY": False, "RETRY_ENABLED": False, "CONCURRENT_REQUESTS": 1,
                    "LOG_ENABLED": False, "TELNETCONSOLE_ENABLED": False, "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"})
p.crawl(Fetch)
p.start()`
	nodeFetch = `const spec = JSON.parse(process.argv[process.argv.length - 1]);
const headers = Object.fromEntries([["user-agent", spec.ua], ...spec.headers.map(([k, v]) => [k.toLowerCase(), v])]);
const print = (status, proto, h, body) => console.log(JSON.stringify({status, proto, headers: h, body}));
async function h1() {
  const https = require("https");
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  for (const u of spec.urls) {
    await new Promise((ok, fail) => https.get(u, { agent, headers }, r => {
      let body = ""; r.setEncoding("utf8"); r.on("data", d => body += d);
      r.on("end", () => { print(r.statusCode, r.httpVersion, r.headers, body); ok(); });
    }).on("error", fail));
  }
  agent.destroy();
}
async function h2() {
  const http2 = require("http2");
  const s = http2.connect(new URL(spec.urls[0]).origin);
  for (const u of spec.urls) {
    const url = new URL(u);
    await new Promise((ok, fail) => {
      const req = s.request({ ":path": url.pathname + url.search, ...headers });
      let status, h, body = "";
      req.on("response", hs => { status = hs[":status"]; h = hs; });
      req.setEncoding("utf8"); req.on("data", d => body += d);
      req.on("end", () => { print(status, "2", h, body); ok(); });
      req.on("error", fail); req.end();
    });
  }
  s.close();
}
(spec.proto === "h2" ? h2() : h1()).catch(e => { console.error(e); process.exit(1); });`
	javaFetchAll = `import java.net.URI;
import java.net.http.*;
import java.util.*;
public class FetchAll {
    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
    public static void main(String[] a) throws Exception {
        // a: proto, User-Agent, then header names and values, "--", the URLs.
        HttpClient c = HttpClient.newBuilder().version(a[0].equals("h2") ? HttpClient.Version.HTTP_2 : HttpClient.Version.HTTP_1_1).build();
        int i = 2;
        List<String[]> hs = new ArrayList<>();
        for (; !a[i].equals("--"); i += 2) hs.add(new String[]{a[i], a[i + 1]});
        for (i++; i < a.length; i++) {
            HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(a[i])).header("User-Agent", a[1]);
            for (String[] h : hs) rb.header(h[0], h[1]);
            HttpResponse<String> r = c.send(rb.build(), HttpResponse.BodyHandlers.ofString());
            StringBuilder h = new StringBuilder("{");
            for (Map.Entry<String, List<String>> e : r.headers().map().entrySet()) {
                if (h.length() > 1) h.append(',');
                h.append(q(e.getKey())).append(':').append(q(String.join(", ", e.getValue())));
            }
            String v = r.version() == HttpClient.Version.HTTP_2 ? "2" : "1.1";
            System.out.println("{\"status\":" + r.statusCode() + ",\"proto\":\"" + v + "\",\"headers\":" + h + "},\"body\":" + q(r.body()) + "}");
        }
    }
}
`
)

// javaFetchRun runs FetchAll, whose arguments are plain (Java has no JSON in
// its standard library).
func javaFetchRun(ctx context.Context, ca *CA, dir string, r Request) ([]Response, error) {
	if ca.TrustStore == "" {
		return nil, fmt.Errorf("java: no trust store (keytool missing)")
	}
	src := filepath.Join(dir, "FetchAll.java")
	if err := os.WriteFile(src, []byte(javaFetchAll), 0o600); err != nil {
		return nil, err
	}
	args := []string{"-Djavax.net.ssl.trustStore=" + ca.TrustStore, "-Djavax.net.ssl.trustStorePassword=changeit", src, r.Proto, r.UA}
	for _, h := range r.Header {
		args = append(args, h[0], h[1])
	}
	args = append(append(args, "--"), r.URLs...)
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("java: %v: %s", err, lastLines(stderr.String(), 12))
	}
	return readAnswers(bytes.NewReader(out))
}

// script returns a fetch that runs a script with a program.
func script(program string, flag string, src string) func(context.Context, *CA, string, Request) ([]Response, error) {
	return func(ctx context.Context, ca *CA, dir string, r Request) ([]Response, error) {
		return fetchScript(ctx, ca, dir, r, program, flag, src)
	}
}
