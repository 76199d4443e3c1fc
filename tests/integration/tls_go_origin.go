// A TLS origin on loopback for t_tls_hello.sh, on Go's crypto/tls (standard library
// only): CERT_GOOD KEY_GOOD CERT_EVIL KEY_EVIL PORTFILE LOG. It serves two names, each
// with its own certificate, chosen by the ClientHello's server_name (the default site
// is the first). Per connection it logs "CONN 0" when the peer sent nothing, "TLS
// sni=NAME" once a handshake completed (NAME as the client sent it, "-" for none),
// "BAD reason" otherwise; then it writes "hello over tls NAME\n" and closes.
package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p peeked) Read(b []byte) (int, error) { return p.r.Read(b) }

var mu sync.Mutex

func logLine(path, line string) {
	mu.Lock()
	defer mu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}

func serve(c net.Conn, cfg *tls.Config, logPath string) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	if _, err := r.Peek(1); err != nil {
		logLine(logPath, "CONN 0")
		return
	}
	t := tls.Server(peeked{c, r}, cfg)
	if err := t.Handshake(); err != nil {
		logLine(logPath, "BAD "+err.Error())
		return
	}
	name := t.ConnectionState().ServerName
	if name == "" {
		name = "-"
	}
	logLine(logPath, "TLS sni="+name)
	fmt.Fprintf(t, "hello over tls %s\n", name)
	t.Close()
}

func main() {
	good, err := tls.LoadX509KeyPair(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	evil, err := tls.LoadX509KeyPair(os.Args[3], os.Args[4])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// NameToCertificate's job, spelled out: evil.test gets its own certificate.
	cfg := &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if h.ServerName == "evil.test" {
			return &evil, nil
		}
		return &good, nil
	}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	os.WriteFile(os.Args[5]+".tmp", []byte(port), 0o644)
	os.Rename(os.Args[5]+".tmp", os.Args[5])
	for {
		c, err := ln.Accept()
		if err != nil {
			continue
		}
		go serve(c, cfg, os.Args[6])
	}
}
