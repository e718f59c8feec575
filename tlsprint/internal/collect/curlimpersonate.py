#!/usr/bin/python3
"""Writes testdata/curl-impersonate.tsv: each ClientHello in the
tests/signatures/*.yaml of curl-impersonate checkouts (real browsers' hellos,
captured by those projects: lwthiker/curl-impersonate and its fork
lexiforest/curl-impersonate), as a JA4_ro and as a whole hello in
tlsprint.Hello's text, for the table and the families of tlsprint (see
main.go).

    python3 curlimpersonate.py lwthiker/curl-impersonate=<checkout>@<commit> \\
        lexiforest/curl-impersonate=<checkout>@<commit> > testdata/curl-impersonate.tsv

The files write "GREASE" for a GREASE value without the value; the hello
gets 0a0a there (any GREASE value is one). The JA4 itself is computed and
checked by the Go generator.
"""
import glob, os, sys
import yaml

EXT = {"server_name": 0x0000, "status_request": 0x0005, "supported_groups": 0x000a,
       "ec_point_formats": 0x000b, "signature_algorithms": 0x000d,
       "application_layer_protocol_negotiation": 0x0010, "signed_certificate_timestamp": 0x0012,
       "padding": 0x0015, "extended_master_secret": 0x0017, "compress_certificate": 0x001b,
       "record_size_limit": 0x001c, "delegated_credentials": 0x0022, "session_ticket": 0x0023,
       "pre_shared_key": 0x0029, "supported_versions": 0x002b, "psk_key_exchange_modes": 0x002d,
       "keyshare": 0x0033, "application_settings": 0x4469, "application_settings_new": 0x44cd,
       "encrypted_client_hello": 0xfe0d, "renegotiation_info": 0xff01}
VER = {"TLS_VERSION_1_3": 0x0304, "TLS_VERSION_1_2": 0x0303, "TLS_VERSION_1_1": 0x0302, "TLS_VERSION_1_0": 0x0301}
CODE = {0x0304: "13", 0x0303: "12", 0x0302: "11", 0x0301: "10"}
GREASE = 0x0a0a

def value(v):
    return GREASE if v == "GREASE" else int(v)

def hexlist(vs):
    return ",".join("%04x" % v for v in vs)

def convert(h):
    """Returns the JA4_ro and the whole hello of a tls_client_hello."""
    ciphers = [value(c) for c in h["ciphersuites"]]
    exts, groups, sigs, alpn = [], [], [], []
    versions = [VER[h["handshake_version"]]]
    for e in h["extensions"]:
        t = e["type"]
        exts.append(GREASE if t == "GREASE" else EXT[t])
        if t == "application_layer_protocol_negotiation":
            alpn = e["alpn_list"]
        elif t == "signature_algorithms":
            sigs = [value(s) for s in e["sig_hash_algs"]]
        elif t == "supported_groups":
            groups = [value(g) for g in e["supported_groups"]]
        elif t == "supported_versions":
            versions = [GREASE if v == "GREASE" else VER[v] for v in e["supported_versions"]]
    hello = "tcp"
    for key, vs in (("v", versions), ("c", ciphers), ("e", exts), ("g", groups), ("s", sigs)):
        if vs:
            hello += " %s=%s" % (key, hexlist(vs))
    if alpn:
        hello += " alpn=" + ",".join(alpn)
    keep = lambda vs: [v for v in vs if v != GREASE]
    c, x = keep(ciphers), keep(exts)
    top = max(keep(versions))
    first = alpn[0] if alpn else ""
    a = "t%s%s%02d%02d%s" % (CODE[top], "d" if 0 in x else "i", min(len(c), 99), min(len(x), 99),
                             first[0] + first[-1] if first else "00")
    ro = "%s_%s_%s" % (a, hexlist(c), hexlist(x))
    if keep(sigs):
        ro += "_" + hexlist(keep(sigs))
    return ro, hello

def main():
    print("# ClientHellos of curl-impersonate's tests/signatures/*.yaml, by curlimpersonate.py")
    print("# name\tJA4_ro\tsource\thello (tlsprint.Hello's text; 0a0a where the file says GREASE)")
    for arg in sys.argv[1:]:
        repo, rest = arg.split("=", 1)
        path, commit = rest.rsplit("@", 1)
        seen = set()
        for f in sorted(glob.glob(os.path.join(path, "tests/signatures/*.yaml"))):
            for doc in yaml.safe_load_all(open(f)):
                if not doc or "signature" not in doc:
                    continue
                b = doc["browser"]
                name = doc.get("name") or "%s_%s_%s" % (b["name"], b["version"], b["os"])
                if name in seen:
                    continue
                seen.add(name)
                ro, hello = convert(doc["signature"]["tls_client_hello"])
                print("%s\t%s\t%s@%s\t%s" % (name, ro, repo, commit, hello))

main()
