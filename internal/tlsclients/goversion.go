package tlsclients

import "runtime"

func goVersion() string { return runtime.Version() }
