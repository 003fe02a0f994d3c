package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// toolsCredentials is AclUtils.getAclRPCHook(ROCKETMQ_HOME +
// "/conf/tools.yml"): the accessKey and secretKey the tools sign with, ok
// false when the file is absent or lacks either. ROCKETMQ_HOME is
// -Drocketmq.home.dir, else the environment's.
func toolsCredentials(props [][2]string) (ak, sk string, ok bool, err error) {
	home := os.Getenv("ROCKETMQ_HOME")
	for _, p := range props {
		if p[0] == "rocketmq.home.dir" {
			home = p[1]
		}
	}
	if home == "" {
		return "", "", false, nil
	}
	path := filepath.Join(home, "conf", "tools.yml")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10)) // a two-key file
	if err != nil {
		return "", "", false, fmt.Errorf("%s: %w", path, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, found := strings.Cut(line, ":")
		if !found || strings.HasPrefix(strings.TrimSpace(k), "#") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "accessKey":
			ak = v
		case "secretKey":
			sk = v
		}
	}
	return ak, sk, ak != "" && sk != "", nil
}
