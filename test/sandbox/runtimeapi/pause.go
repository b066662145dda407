package runtimeapi

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Pause stops the server's process (SIGSTOP): connections are still accepted by the kernel, but nothing answers,
// as with a runtime API server that hangs. Resume continues it; Stop resumes a paused server first. Linux only
// (the process is found through /proc by its --secure-port).
func (s *Server) Pause() error {
	pid, err := s.pid()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("pause runtime API server %d: %w", pid, err)
	}
	s.pausedPID = pid
	return nil
}

// Resume continues a paused server (no-op when it is not paused).
func (s *Server) Resume() error {
	if s.pausedPID == 0 {
		return nil
	}
	if err := syscall.Kill(s.pausedPID, syscall.SIGCONT); err != nil {
		return fmt.Errorf("resume runtime API server %d: %w", s.pausedPID, err)
	}
	s.pausedPID = 0
	return nil
}

// pid finds the kube-apiserver process serving the server's port.
func (s *Server) pid() (int, error) {
	u, err := url.Parse(s.URL())
	if err != nil {
		return 0, fmt.Errorf("runtime API server URL: %w", err)
	}
	want := []byte("--secure-port=" + u.Port())
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil {
			continue // the process ended meanwhile
		}
		args := bytes.Split(cmdline, []byte{0})
		if len(args) == 0 || filepath.Base(string(args[0])) != "kube-apiserver" {
			continue
		}
		for _, a := range args[1:] {
			if bytes.Equal(a, want) {
				return strconv.Atoi(filepath.Base(filepath.Dir(p)))
			}
		}
	}
	return 0, errors.New("the runtime API server's process was not found (pausing needs Linux /proc)")
}

// Pause stops the API server behind the shoot key (see Server.Pause); resume continues it.
func (p *Pool) Pause(key string) (resume func() error, err error) {
	srv, err := p.server(key)
	if err != nil {
		return nil, err
	}
	if err := srv.Pause(); err != nil {
		return nil, err
	}
	return srv.Resume, nil
}
