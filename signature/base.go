package signature

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/dunglas/httpsfv"
)

// dictionaryFields are the fields whose structured type is known to be a
// Dictionary, for the "sf" and "key" component parameters.
var dictionaryFields = map[string]bool{
	"signature-agent":     true,
	"signature-input":     true,
	"signature":           true,
	"accept-signature":    true,
	"content-digest":      true,
	"repr-digest":         true,
	"want-content-digest": true,
	"want-repr-digest":    true,
	"priority":            true,
}

// message is what a signature base reads from a request. The target parts
// are the request's own, as the client sent them: the raw path and query,
// never a decoded or rewritten form.
type message struct {
	method    string
	scheme    string
	authority string // Host as sent
	path      string // raw path, "" for "*"
	query     string // raw query without '?', or ""
	hasQuery  bool
	target    string // the request target as sent
	header    http.Header
	// dicts holds dictionary fields already parsed (Signature-Agent), by
	// lower-case name, so that a "key" component does not parse them again.
	dicts map[string]*httpsfv.Dictionary
}

// requestMessage reads a message from an incoming server request. The
// scheme is https when the connection was TLS.
func requestMessage(r *http.Request) message {
	m := message{method: r.Method, scheme: "http", authority: r.Host, target: r.RequestURI, header: r.Header}
	if r.TLS != nil {
		m.scheme = "https"
	}
	t := r.RequestURI
	if t == "" && r.URL != nil {
		t = r.URL.RequestURI()
		m.target = t
	}
	if i := strings.Index(t, "://"); i > 0 && !strings.HasPrefix(t, "/") {
		// Absolute form: the path starts after the authority.
		rest := t[i+3:]
		if j := strings.IndexAny(rest, "/?"); j >= 0 {
			t = rest[j:]
		} else {
			t = ""
		}
	}
	if t == "*" {
		return m
	}
	if p, q, ok := strings.Cut(t, "?"); ok {
		m.path, m.query, m.hasQuery = p, q, true
	} else {
		m.path = t
	}
	return m
}

// signatureBase builds the signature base of RFC 9421 section 2.5 for the
// covered components and signature parameters in in (one Signature-Input
// member, whose serialization is the @signature-params line).
func signatureBase(m *message, in httpsfv.InnerList) ([]byte, error) {
	var b strings.Builder
	b.Grow(256 + 64*len(in.Items))
	seen := make(map[string]bool, len(in.Items))
	for _, it := range in.Items {
		name, _ := it.Value.(string)
		id, err := httpsfv.Marshal(it)
		if err != nil {
			return nil, fmt.Errorf("component %q: %v", name, err)
		}
		if seen[id] {
			return nil, fmt.Errorf("component %s is covered twice", id)
		}
		seen[id] = true
		v, err := componentValue(m, name, it.Params)
		if err != nil {
			return nil, fmt.Errorf("component %s: %w", id, err)
		}
		b.WriteString(id)
		b.WriteString(": ")
		b.WriteString(v)
		b.WriteByte('\n')
	}
	params, err := httpsfv.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("@signature-params: %v", err)
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(params)
	return []byte(b.String()), nil
}

// componentValue returns the value of one covered component.
func componentValue(m *message, name string, p *httpsfv.Params) (string, error) {
	if name == "" || strings.ToLower(name) != name {
		return "", errors.New("component names are lower case")
	}
	var flags []string
	if p != nil {
		flags = p.Names()
	}
	if name[0] == '@' {
		for _, f := range flags {
			switch f {
			case "req":
				return "", errors.New("the req parameter applies to responses only")
			case "name":
				if name != "@query-param" {
					return "", errors.New("the name parameter applies to @query-param only")
				}
			default:
				return "", fmt.Errorf("parameter %q does not apply to derived components", f)
			}
		}
		return derivedValue(m, name)
	}
	var sf, bs bool
	key := ""
	for _, f := range flags {
		v, _ := p.Get(f)
		switch f {
		case "sf":
			sf = v == true
		case "bs":
			bs = v == true
		case "key":
			s, ok := v.(string)
			if !ok {
				return "", errors.New("the key parameter is not a string")
			}
			key = s
		case "req":
			return "", errors.New("the req parameter applies to responses only")
		case "tr":
			return "", unsupported("trailer fields")
		default:
			return "", fmt.Errorf("unknown parameter %q", f)
		}
	}
	lines, ok := m.header[http.CanonicalHeaderKey(name)]
	if name == "host" && !ok && m.authority != "" {
		lines, ok = []string{m.authority}, true // Go keeps Host apart from the header map
	}
	if !ok {
		return "", errors.New("the field is not in the request")
	}
	switch {
	case bs && (sf || key != ""):
		return "", errors.New("bs cannot be combined with sf or key")
	case bs:
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = ":" + base64.StdEncoding.EncodeToString([]byte(strings.Trim(l, " \t"))) + ":"
		}
		return strings.Join(out, ", "), nil
	case sf || key != "":
		if !dictionaryFields[name] {
			return "", unsupported("the structured type of field %q", name)
		}
		d := m.dicts[name]
		if d == nil {
			var err error
			if d, err = httpsfv.UnmarshalDictionary(lines); err != nil {
				return "", fmt.Errorf("not a dictionary: %v", err)
			}
		}
		if key == "" {
			return httpsfv.Marshal(d)
		}
		member, ok := d.Get(key)
		if !ok {
			return "", fmt.Errorf("no member %q", key)
		}
		return httpsfv.Marshal(member)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		// Obsolete line folding is not delivered by Go's server; field
		// values are trimmed and combined with ", " (RFC 9421 section 2.1).
		out[i] = strings.Trim(l, " \t")
	}
	return strings.Join(out, ", "), nil
}

// derivedValue returns the value of a derived component (RFC 9421 section
// 2.2) of a request.
func derivedValue(m *message, name string) (string, error) {
	switch name {
	case "@method":
		return m.method, nil
	case "@authority":
		return authority(m.authority, m.scheme), nil
	case "@scheme":
		return m.scheme, nil
	case "@target-uri":
		return m.scheme + "://" + authority(m.authority, m.scheme) + pathValue(m) + queryPart(m), nil
	case "@request-target":
		return m.target, nil
	case "@path":
		return pathValue(m), nil
	case "@query":
		return "?" + m.query, nil
	case "@query-param":
		return "", unsupported("@query-param")
	case "@status":
		return "", errors.New("@status applies to responses only")
	}
	return "", fmt.Errorf("unknown derived component %q", name)
}

func pathValue(m *message) string {
	if m.path == "" {
		return "/"
	}
	return m.path
}

func queryPart(m *message) string {
	if !m.hasQuery {
		return ""
	}
	return "?" + m.query
}

// authority normalises a Host value as HTTP (RFC 9110 section 4.2.3) and
// RFC 9421 section 2.2.3 ask: lower case, without the scheme's default
// port.
func authority(host, scheme string) string {
	host = strings.ToLower(host)
	if scheme == "https" {
		host = strings.TrimSuffix(host, ":443")
	} else {
		host = strings.TrimSuffix(host, ":80")
	}
	return host
}

// agentOrigin checks a Signature-Agent member value of the directory type
// and returns it as an origin: https, a host, an optional port other than
// 443, nothing else (an empty path "/" is accepted).
func agentOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("agent %q is not a URI", raw)
	}
	switch {
	case u.Scheme != "https":
		return "", fmt.Errorf("agent %q is not an https URI", raw)
	case u.Host == "" || u.User != nil || u.Opaque != "":
		return "", fmt.Errorf("agent %q has no plain host", raw)
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "", fmt.Errorf("agent %q is not an origin (https://host[:port])", raw)
	}
	host := strings.ToLower(u.Host)
	host = strings.TrimSuffix(host, ":443")
	if strings.HasSuffix(host, ":") {
		return "", fmt.Errorf("agent %q has an empty port", raw)
	}
	return "https://" + host, nil
}

// AgentOrigin normalises an agent URL the way Signature-Agent values are
// compared: "https://" plus the lower-case host and a port other than 443.
// It refuses anything that is not an https origin.
func AgentOrigin(raw string) (string, error) {
	return agentOrigin(raw)
}

// parseInnerList parses one inner list with parameters, the form of a
// Signature-Input member value.
func parseInnerList(s string) (httpsfv.InnerList, error) {
	d, err := httpsfv.UnmarshalDictionary([]string{"s=" + s})
	if err != nil {
		return httpsfv.InnerList{}, err
	}
	m, _ := d.Get("s")
	il, ok := m.(httpsfv.InnerList)
	if !ok {
		return il, errors.New("not an inner list")
	}
	for _, it := range il.Items {
		if _, ok := it.Value.(string); !ok {
			return il, errors.New("a component is not a string")
		}
	}
	return il, nil
}
