"""The embedded cluster's real Linux node: containerd, runc, CNI bridge, kubelet, kube-proxy and CoreDNS."""
