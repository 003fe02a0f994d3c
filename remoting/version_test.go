package remoting

import "testing"

func TestVersions(t *testing.T) {
	for name, want := range map[string]int32{"V4_9_8": 409, "V5_3_3": 479, "V5_5_0": 513} {
		v, err := ParseVersion(name)
		if err != nil || v != want {
			t.Errorf("ParseVersion(%s) = %d, %v; want %d", name, v, err, want)
		}
		if got := VersionName(want); got != name {
			t.Errorf("VersionName(%d) = %s, want %s", want, got, name)
		}
	}
	for _, bad := range []string{"", "V5_5_0_SNAPSHOT", "HIGHER_VERSION", "5.5.0", "v5_5_0"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
	if VersionName(100000) != "HIGHER_VERSION" || VersionName(-3) != "-3" {
		t.Errorf("VersionName past the table: %s, %s", VersionName(100000), VersionName(-3))
	}
	if ServerVersion() != 513 {
		t.Errorf("default reported version %d, want V5_5_0 (513)", ServerVersion())
	}
}
