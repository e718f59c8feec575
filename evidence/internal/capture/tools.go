package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The User-Agents the libraries pose with: a current Chrome and Firefox on
// Windows, as posers send them.
const (
	chromeUA  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	firefoxUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:153.0) Gecko/20100101 Firefox/153.0"
)

// tool is a non-browser client: fetch makes one GET of url with the
// User-Agent ua (and, for those that copy a browser's, its other headers).
type tool struct {
	name    string
	version []string // the command that prints its version
	fetch   func(dir, ca, url, ua string, header http.Header) error
	// copies names the browser run whose navigation headers the tool
	// sends as well as the User-Agent ("" for none).
	copies string
}

func command(name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

const python = "/usr/bin/python3"

var tools = []tool{
	{name: "curl", version: []string{"curl", "--version"}, fetch: func(_, ca, url, ua string, _ http.Header) error {
		return command("curl", "-sS", "-o", "/dev/null", "--cacert", ca, "-A", ua, url)
	}},
	{name: "curl-chrome-headers", version: []string{"curl", "--version"}, copies: "chromium", fetch: curlWith},
	{name: "curl-firefox-headers", version: []string{"curl", "--version"}, copies: "firefox", fetch: curlWith},
	{name: "wget", version: []string{"wget", "--version"}, fetch: func(_, ca, url, ua string, _ http.Header) error {
		return command("wget", "-q", "-O", "/dev/null", "--ca-certificate="+ca, "-U", ua, url)
	}},
	{name: "python-requests", version: []string{python, "-c", "import requests; print('requests', requests.__version__)"}, fetch: func(_, ca, url, ua string, _ http.Header) error {
		return command(python, "-c", "import sys, requests; requests.get(sys.argv[1], headers={'User-Agent': sys.argv[2]}, verify=sys.argv[3])", url, ua, ca)
	}},
	{name: "python-httpx", version: []string{python, "-c", "import httpx; print('httpx', httpx.__version__)"}, fetch: func(_, ca, url, ua string, _ http.Header) error {
		return command(python, "-c", "import sys, httpx; httpx.get(sys.argv[1], headers={'User-Agent': sys.argv[2]}, verify=sys.argv[3])", url, ua, ca)
	}},
	{name: "python-aiohttp", version: []string{python, "-c", "import aiohttp; print('aiohttp', aiohttp.__version__)"}, fetch: func(_, ca, url, ua string, _ http.Header) error {
		return command(python, "-c", `import sys, ssl, asyncio, aiohttp
async def main():
    ctx = ssl.create_default_context(cafile=sys.argv[3])
    async with aiohttp.ClientSession(headers={'User-Agent': sys.argv[2]}) as s:
        async with s.get(sys.argv[1], ssl=ctx) as r:
            await r.read()
asyncio.run(main())`, url, ua, ca)
	}},
	{name: "python-urllib", version: []string{python, "--version"}, fetch: func(_, ca, url, ua string, _ http.Header) error {
		return command(python, "-c", `import sys, ssl, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[3])
urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers={'User-Agent': sys.argv[2]}), context=ctx).read()`, url, ua, ca)
	}},
	{name: "go-net-http", version: []string{"go", "version"}, fetch: goFetch},
	{name: "node-https", version: []string{"node", "--version"}, fetch: func(_, ca, url, ua string, _ http.Header) error {
		return command("node", "-e", `const fs = require("fs"); const [url, ua, ca] = process.argv.slice(1);
const mod = url.startsWith("https:") ? require("https") : require("http");
mod.get(url, {headers: {"User-Agent": ua}, ca: fs.readFileSync(ca)}, r => { r.resume(); r.on("end", () => process.exit(0)); }).on("error", e => { console.error(e); process.exit(1); });`, url, ua, ca)
	}},
	{name: "scrapy", version: []string{"scrapy", "version"}, fetch: func(dir, _, url, ua string, _ http.Header) error {
		spider := filepath.Join(dir, "spider.py")
		if err := os.WriteFile(spider, []byte(`import scrapy
class One(scrapy.Spider):
    name = "one"
    def __init__(self, url=None, **kw):
        super().__init__(**kw)
        self.start_urls = [url]
    def parse(self, response):
        pass
`), 0o600); err != nil {
			return err
		}
		return command("scrapy", "runspider", spider, "-a", "url="+url, "-s", "USER_AGENT="+ua, "-s", "LOG_LEVEL=ERROR", "-s", "TELNETCONSOLE_ENABLED=False")
	}},
}

// curlWith sends the User-Agent and every other header of a browser's
// navigation, as a poser that copied them from the browser's developer
// tools does.
func curlWith(_, ca, url, ua string, header http.Header) error {
	args := []string{"-sS", "-o", "/dev/null", "--cacert", ca}
	keys := make([]string, 0, len(header))
	for k := range header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "User-Agent" || k == "Cookie" {
			continue
		}
		for _, v := range header[k] {
			args = append(args, "-H", k+": "+v)
		}
	}
	args = append(args, "-A", ua, url)
	return command("curl", args...)
}

// goFetch is Go's net/http client.
func goFetch(_, ca, url, ua string, _ http.Header) error {
	pem, err := os.ReadFile(ca)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", ua)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// toolVersion runs a tool's version command and returns its first line.
func toolVersion(args []string) string {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}
