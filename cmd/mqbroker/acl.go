package main

import (
	"context"
	"sync"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/acl"
)

// startACL loads home's ACL files and watches them; stop ends the watcher
// and waits for it.
func startACL(home string, log zerolog.Logger) (*acl.Files, *acl.Interceptor, func(), error) {
	f, err := acl.NewFiles(home, log)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f.Run(ctx, acl.WatchInterval)
	}()
	return f, acl.NewInterceptor(f, log), func() { cancel(); wg.Wait() }, nil
}
