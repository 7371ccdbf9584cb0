package main

import (
	"regexp"
	"testing"
)

func TestVersionNamesReleaseCommitAndToolchain(t *testing.T) {
	toolchain := `go1\.\d+(\.\d+)?\S* \w+/\w+`
	for _, tc := range []struct {
		release, commit string
		want            string
	}{
		{"", "", `^devel(-[0-9a-f]{12}(-dirty)?)? \(development build, ` + toolchain + `\)$`},
		{"1.2.0", "0123456789abcdef0123456789abcdef01234567", `^1\.2\.0 \(commit 0123456789ab, ` + toolchain + `\)$`},
		{"1.2.0", "0123456789abcdef0123456789abcdef01234567-dirty", `^1\.2\.0 \(development build, commit 0123456789ab-dirty, ` + toolchain + `\)$`},
		{"0.0.0-dev.g0123456789ab", "0123456789abcdef0123456789abcdef01234567", `^0\.0\.0-dev\.g0123456789ab \(development build, commit 0123456789ab, ` + toolchain + `\)$`},
		{"1.2.0", "", `^1\.2\.0 \(commit unknown, ` + toolchain + `\)$`},
	} {
		releaseVersion, releaseCommit = tc.release, tc.commit
		got := version()
		releaseVersion, releaseCommit = "", ""
		if !regexp.MustCompile(tc.want).MatchString(got) {
			t.Errorf("release %q commit %q: version() = %q, want %s", tc.release, tc.commit, got, tc.want)
		}
	}
}

func TestIsPseudoVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.0.0-20261201135300-6ef091c1a2b3":        true,
		"v0.0.0-20261201135300-6ef091c1a2b3+dirty":  true,
		"v1.2.4-0.20261201135300-6ef091c1a2b3":      true,
		"v1.3.0-rc.1.0.20261201135300-6ef091c1a2b3": true,
		"v1.2.0":                             false,
		"v1.2.0-rc.1":                        false,
		"(devel)":                            false,
		"v0.0.0-2026120113530x-6ef091c1a2b3": false,
	} {
		if got := isPseudoVersion(v); got != want {
			t.Errorf("isPseudoVersion(%q) = %v, want %v", v, got, want)
		}
	}
}
