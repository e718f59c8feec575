package uaclass

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExternalCorpus measures the classifier on an independent corpus that
// is not committed: the test resources of ua-parser's uap-core, the
// browser-detection suite issue 20 was measured on. The classifier is never
// tuned on it. Point UACLASS_UAP_CORE at a folder holding uap-core's
// tests/*.yaml and test_resources/*.yaml (flattened) to run it:
//
//	UACLASS_UAP_CORE=/path/to/uap-core go test ./uaclass -run TestExternalCorpus -v
//
// A string is a robot when uap-core's device parser calls it "Spider" or its
// user-agent family names a robot; a browser when it is no robot and looks
// like a browser (see browserLooking); the rest are people's apps and tools.
func TestExternalCorpus(t *testing.T) {
	dir := os.Getenv("UACLASS_UAP_CORE")
	if dir == "" {
		t.Skip("UACLASS_UAP_CORE is not set")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		t.Fatalf("no yaml files in %s", dir)
	}
	robotFamily := regexp.MustCompile(`(?i)bot|spider|crawl|slurp|fetcher|archiver|scanner|preview|monitor|checker|validator|sitemap|index|search|seo|scrap`)
	family := map[string]string{}
	spider := map[string]bool{}
	var order []string
	for _, f := range files {
		device := strings.HasSuffix(f, "test_device.yaml")
		var cur string
		for _, l := range readLines(t, f) {
			l = strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(l, "- user_agent_string: "):
				cur = yamlScalar(strings.TrimPrefix(l, "- user_agent_string: "))
				if _, ok := family[cur]; !ok {
					family[cur] = ""
					order = append(order, cur)
				}
			case strings.HasPrefix(l, "family: ") && cur != "":
				v := yamlScalar(strings.TrimPrefix(l, "family: "))
				if device {
					spider[cur] = spider[cur] || v == "Spider"
				} else if family[cur] == "" {
					family[cur] = v
				}
			}
		}
	}
	var entries []corpusEntry
	for _, ua := range order {
		e := corpusEntry{ua: ua, source: "uap-core", split: "external"}
		switch {
		case spider[ua] || robotFamily.MatchString(family[ua]):
			e.kind = kindBot
		case browserLooking(ua):
			e.kind = kindBrowser
		default:
			e.kind = kindHuman
		}
		entries = append(entries, e)
	}
	f := measure(newTestClassifier(t), entries)["external"]
	t.Logf("uap-core: %d distinct strings; %v", len(order), f)
	if os.Getenv("UACLASS_CORPUS_MISSES") != "" {
		for k, ms := range f.misses {
			for _, m := range ms {
				t.Logf("%s: %s", k, m)
			}
		}
	}
}

// yamlScalar reads a plain, single-quoted or double-quoted YAML scalar.
func yamlScalar(s string) string {
	switch {
	case len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'':
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	case len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"':
		r := strings.NewReplacer(`\"`, `"`, `\\`, `\`)
		return r.Replace(s[1 : len(s)-1])
	}
	return s
}
