// Command oidcop runs the test OpenID Provider of package oidcop, for the browser tests
// (frontend/e2e/run.mjs builds and starts it). It prints the issuer URL on its first
// line of output and serves until killed. Test tooling only.
//
//	oidcop --addr 127.0.0.1:0 --client-id agentdesk --client-secret s3cret \
//	  --redirect http://127.0.0.1:8080/auth/callback --users "dana:pw:dana@acme.test:Dana Scott,…"
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentdesk/agentdesk/backend/testenv/oidcop"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "where to listen")
	clientID := flag.String("client-id", "agentdesk", "the client id")
	secret := flag.String("client-secret", "", "the client secret")
	redirect := flag.String("redirect", "", "the client's redirect URI (comma list)")
	users := flag.String("users", "", "accounts: username:password:email:name, comma separated")
	flag.Parse()
	o := oidcop.Options{Addr: *addr, ClientID: *clientID, ClientSecret: *secret}
	if *redirect != "" {
		o.RedirectURIs = strings.Split(*redirect, ",")
	}
	for _, u := range strings.Split(*users, ",") {
		if u = strings.TrimSpace(u); u == "" {
			continue
		}
		f := strings.SplitN(u, ":", 4)
		if len(f) != 4 {
			fmt.Fprintf(os.Stderr, "oidcop: a user is username:password:email:name, not %q\n", u)
			os.Exit(2)
		}
		o.Users = append(o.Users, oidcop.User{Username: f[0], Password: f[1], Email: f[2], Name: f[3]})
	}
	p, err := oidcop.Start(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "oidcop:", err)
		os.Exit(1)
	}
	fmt.Println(p.Issuer)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	p.Close()
}
