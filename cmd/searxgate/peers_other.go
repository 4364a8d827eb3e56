//go:build !linux

package main

import "net"

// watchable: only Linux sockets are looked at; elsewhere a client's
// going is seen when its request's deadline passes.
func watchable(net.Conn) bool { return false }

func peerClosed(net.Conn) bool { return false }
