#!/usr/bin/python3
"""Writes testdata/curl-impersonate.tsv: the JA4_ro of each ClientHello in
lwthiker/curl-impersonate's tests/signatures/*.yaml (real browsers' hellos,
captured by that project), for the table of tlsprint (see main.go).

    python3 curlimpersonate.py <curl-impersonate checkout> <commit> > testdata/curl-impersonate.tsv

GREASE values are left out (JA4 drops them); the JA4 itself is computed and
checked by the Go generator from the JA4_ro.
"""
import glob, os, sys
import yaml

EXT = {"server_name": 0x0000, "status_request": 0x0005, "supported_groups": 0x000a,
       "ec_point_formats": 0x000b, "signature_algorithms": 0x000d,
       "application_layer_protocol_negotiation": 0x0010, "signed_certificate_timestamp": 0x0012,
       "padding": 0x0015, "extended_master_secret": 0x0017, "compress_certificate": 0x001b,
       "record_size_limit": 0x001c, "delegated_credentials": 0x0022, "session_ticket": 0x0023,
       "pre_shared_key": 0x0029, "supported_versions": 0x002b, "psk_key_exchange_modes": 0x002d,
       "keyshare": 0x0033, "application_settings": 0x4469, "renegotiation_info": 0xff01}
VER = {"TLS_VERSION_1_3": "13", "TLS_VERSION_1_2": "12", "TLS_VERSION_1_1": "11", "TLS_VERSION_1_0": "10"}

def hexlist(vs):
    return ",".join("%04x" % v for v in vs)

def ja4_ro(h):
    ciphers = [c for c in h["ciphersuites"] if c != "GREASE"]
    exts, alpn, sigs, version = [], "00", [], VER[h["handshake_version"]]
    for e in h["extensions"]:
        t = e["type"]
        if t == "GREASE":
            continue
        exts.append(EXT[t])
        if t == "application_layer_protocol_negotiation":
            first = e["alpn_list"][0]
            alpn = first[0] + first[-1]
        elif t == "signature_algorithms":
            sigs = [s for s in e["sig_hash_algs"] if s != "GREASE"]
        elif t == "supported_versions":
            version = max(VER[v] for v in e["supported_versions"] if v != "GREASE")
    sni = "d" if 0 in exts else "i"
    a = "t%s%s%02d%02d%s" % (version, sni, min(len(ciphers), 99), min(len(exts), 99), alpn)
    ro = "%s_%s_%s" % (a, hexlist(ciphers), hexlist(exts))
    return ro + ("_" + hexlist(sigs) if sigs else "")

def main():
    repo, commit = sys.argv[1], sys.argv[2]
    print("# ClientHellos of lwthiker/curl-impersonate@%s tests/signatures/*.yaml, by curlimpersonate.py" % commit)
    print("# name\tJA4_ro\tsource")
    for path in sorted(glob.glob(os.path.join(repo, "tests/signatures/*.yaml"))):
        for doc in yaml.safe_load_all(open(path)):
            if not doc:
                continue
            ro = ja4_ro(doc["signature"]["tls_client_hello"])
            print("%s\t%s\tlwthiker/curl-impersonate@%s" % (doc["name"], ro, commit))

main()
