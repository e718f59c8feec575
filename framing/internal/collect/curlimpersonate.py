#!/usr/bin/python3
"""Writes testdata/curl-impersonate.tsv: the HTTP/2 pseudo-header order of
each browser signature in lwthiker/curl-impersonate's tests/signatures/*.yaml
(real browsers' first requests, captured by that project), for the table of
framing (see generate.go). The signatures hold no SETTINGS: only the order.

    python3 curlimpersonate.py <curl-impersonate checkout> <commit> > testdata/curl-impersonate.tsv
"""
import glob, os, sys
import yaml

LETTER = {":method": "m", ":authority": "a", ":scheme": "s", ":path": "p"}

def main(root, commit):
    print("# HTTP/2 pseudo-header orders of lwthiker/curl-impersonate@%s tests/signatures, by curlimpersonate.py" % commit)
    print("# signature\tpseudo-header order")
    for path in sorted(glob.glob(os.path.join(root, "tests", "signatures", "*.yaml"))):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if not doc or "signature" not in doc:
                    continue
                h2 = doc["signature"].get("http2")
                if not h2:
                    continue
                order = ",".join(LETTER[p] for p in h2["pseudo_headers"])
                print("%s\t%s" % (doc["name"], order))

main(sys.argv[1], sys.argv[2])
