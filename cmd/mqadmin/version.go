package main

import "fmt"

// versionNames is MQVersion.Version by ordinal: sixteen 3.0.0 pre-releases,
// then a SNAPSHOT and a release for each version from 3.0.1 (3.0 runs to
// .15, 3.3–3.9 start at .1) to 5.9.9, then HIGHER_VERSION.
var versionNames = func() []string {
	out := []string{"V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1"}
	for b := 1; b <= 9; b++ {
		if b >= 6 {
			out = append(out, fmt.Sprintf("V3_0_0_BETA%d_SNAPSHOT", b))
		}
		out = append(out, fmt.Sprintf("V3_0_0_BETA%d", b))
	}
	out = append(out, "V3_0_0_FINAL")
	add := func(major, minor, from, to int) {
		for p := from; p <= to; p++ {
			v := fmt.Sprintf("V%d_%d_%d", major, minor, p)
			out = append(out, v+"_SNAPSHOT", v)
		}
	}
	add(3, 0, 1, 15)
	for minor := 1; minor <= 9; minor++ {
		from := 0
		if minor >= 3 {
			from = 1
		}
		add(3, minor, from, 9)
	}
	for major := 4; major <= 5; major++ {
		for minor := 0; minor <= 9; minor++ {
			add(major, minor, 0, 9)
		}
	}
	return append(out, "HIGHER_VERSION")
}()

// versionDesc is MQVersion.getVersionDesc.
func versionDesc(v int) string {
	if v < 0 {
		v = 0 // Apache would throw; a client cannot send a negative version
	}
	if v >= len(versionNames) {
		return versionNames[len(versionNames)-1]
	}
	return versionNames[v]
}
