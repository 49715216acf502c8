// Command winsuite-servicelb is the embedded cluster's LoadBalancer implementation. It runs Kubernetes' own service
// controller (k8s.io/cloud-provider/controllers/service, the one every cloud controller manager runs: it adds the
// service.kubernetes.io/load-balancer-cleanup finalizer and writes each Service's load-balancer status) over a
// provider that gives each LoadBalancer Service an address from a range on the cluster's bridge and puts that address
// on the bridge, as MetalLB's layer-2 mode announces one: the node answers for it, and kube-proxy forwards it to the
// Service's endpoints. Nothing leaves the machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	cloudprovider "k8s.io/cloud-provider"
	servicecontroller "k8s.io/cloud-provider/controllers/service"
	"k8s.io/component-base/featuregate"
	controllersmetrics "k8s.io/component-base/metrics/prometheus/controllers"
	"k8s.io/klog/v2"
)

// bridgeProvider is a cloudprovider.Interface with load balancers only.
type bridgeProvider struct {
	client kubernetes.Interface
	bridge string
	pool   []netip.Addr
	mu     sync.Mutex
	given  map[string]netip.Addr // namespace/name -> address, for Services whose status is not written yet
}

func (p *bridgeProvider) Initialize(cloudprovider.ControllerClientBuilder, <-chan struct{}) {}
func (p *bridgeProvider) LoadBalancer() (cloudprovider.LoadBalancer, bool)                  { return p, true }
func (p *bridgeProvider) Instances() (cloudprovider.Instances, bool)                        { return nil, false }
func (p *bridgeProvider) InstancesV2() (cloudprovider.InstancesV2, bool)                    { return nil, false }
func (p *bridgeProvider) Zones() (cloudprovider.Zones, bool)                                { return nil, false }
func (p *bridgeProvider) Clusters() (cloudprovider.Clusters, bool)                          { return nil, false }
func (p *bridgeProvider) Routes() (cloudprovider.Routes, bool)                              { return nil, false }
func (p *bridgeProvider) ProviderName() string                                              { return "winsuite-bridge" }
func (p *bridgeProvider) HasClusterID() bool                                                { return false }

func key(service *v1.Service) string { return service.Namespace + "/" + service.Name }

// address is the pool address a Service's status holds, if any.
func (p *bridgeProvider) address(service *v1.Service) (netip.Addr, bool) {
	for _, ingress := range service.Status.LoadBalancer.Ingress {
		if addr, err := netip.ParseAddr(ingress.IP); err == nil && p.inPool(addr) {
			return addr, true
		}
	}
	return netip.Addr{}, false
}

func (p *bridgeProvider) inPool(addr netip.Addr) bool {
	for _, candidate := range p.pool {
		if candidate == addr {
			return true
		}
	}
	return false
}

func status(addr netip.Addr) *v1.LoadBalancerStatus {
	mode := v1.LoadBalancerIPModeVIP
	return &v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: addr.String(), IPMode: &mode}}}
}

func (p *bridgeProvider) GetLoadBalancer(_ context.Context, _ string, service *v1.Service) (*v1.LoadBalancerStatus, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if addr, ok := p.given[key(service)]; ok {
		return status(addr), true, nil
	}
	if addr, ok := p.address(service); ok {
		return status(addr), true, nil
	}
	return nil, false, nil
}

func (p *bridgeProvider) GetLoadBalancerName(_ context.Context, _ string, service *v1.Service) string {
	return cloudprovider.DefaultLoadBalancerName(service)
}

// EnsureLoadBalancer keeps the Service's address (or the one it asks for in spec.loadBalancerIP, when free), else
// gives it the lowest free one, and puts it on the bridge.
func (p *bridgeProvider) EnsureLoadBalancer(ctx context.Context, _ string, service *v1.Service, _ []*v1.Node) (*v1.LoadBalancerStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	addr, err := p.choose(ctx, service)
	if err != nil {
		return nil, err
	}
	if err := ip("addr", "replace", addr.String()+"/32", "dev", p.bridge); err != nil {
		return nil, err
	}
	p.given[key(service)] = addr
	klog.InfoS("load balancer ensured", "service", key(service), "address", addr)
	return status(addr), nil
}

func (p *bridgeProvider) choose(ctx context.Context, service *v1.Service) (netip.Addr, error) {
	if addr, ok := p.given[key(service)]; ok {
		return addr, nil
	}
	if addr, ok := p.address(service); ok {
		return addr, nil
	}
	used, err := p.used(ctx, key(service))
	if err != nil {
		return netip.Addr{}, err
	}
	if wanted, err := netip.ParseAddr(service.Spec.LoadBalancerIP); err == nil {
		if !p.inPool(wanted) || used[wanted] {
			return netip.Addr{}, fmt.Errorf("spec.loadBalancerIP %s is not a free address of the pool %s-%s",
				wanted, p.pool[0], p.pool[len(p.pool)-1])
		}
		return wanted, nil
	}
	for _, candidate := range p.pool {
		if !used[candidate] {
			return candidate, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("every address of the pool %s-%s is in use", p.pool[0], p.pool[len(p.pool)-1])
}

// used is every pool address another Service holds (its status, or given by this process and not yet written).
func (p *bridgeProvider) used(ctx context.Context, except string) (map[netip.Addr]bool, error) {
	services, err := p.client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	used := map[netip.Addr]bool{}
	for i := range services.Items {
		if key(&services.Items[i]) == except {
			continue
		}
		if addr, ok := p.address(&services.Items[i]); ok {
			used[addr] = true
		}
	}
	for owner, addr := range p.given {
		if owner != except {
			used[addr] = true
		}
	}
	return used, nil
}

func (p *bridgeProvider) UpdateLoadBalancer(context.Context, string, *v1.Service, []*v1.Node) error {
	return nil // the address does not depend on the nodes: kube-proxy on the node forwards it
}

func (p *bridgeProvider) EnsureLoadBalancerDeleted(_ context.Context, _ string, service *v1.Service) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	addr, ok := p.given[key(service)]
	if !ok {
		addr, ok = p.address(service)
	}
	if !ok {
		return nil
	}
	err := ip("addr", "del", addr.String()+"/32", "dev", p.bridge)
	if err != nil && !strings.Contains(err.Error(), "Cannot assign requested address") {
		return err
	}
	delete(p.given, key(service))
	klog.InfoS("load balancer deleted", "service", key(service), "address", addr)
	return nil
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// addressRange is every address from first to last, inclusive.
func addressRange(spec string) ([]netip.Addr, error) {
	first, last, found := strings.Cut(spec, "-")
	if !found {
		return nil, fmt.Errorf("--addresses %q: expected FIRST-LAST", spec)
	}
	from, err := netip.ParseAddr(first)
	if err != nil {
		return nil, err
	}
	to, err := netip.ParseAddr(last)
	if err != nil {
		return nil, err
	}
	var pool []netip.Addr
	for addr := from; addr.Compare(to) <= 0; addr = addr.Next() {
		pool = append(pool, addr)
		if len(pool) > 1024 {
			return nil, fmt.Errorf("--addresses %q: more than 1024 addresses", spec)
		}
	}
	sort.Slice(pool, func(i, j int) bool { return pool[i].Less(pool[j]) })
	return pool, nil
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	bridge := flag.String("bridge", "cni0", "the bridge the addresses are put on")
	addresses := flag.String("addresses", "", "the address range FIRST-LAST given to LoadBalancer Services")
	cluster := flag.String("cluster-name", "winsuite", "the cluster's name, as cloud controller managers take it")
	klog.InitFlags(nil)
	flag.Parse()
	if err := run(*kubeconfig, *bridge, *addresses, *cluster); err != nil {
		klog.ErrorS(err, "winsuite-servicelb failed")
		os.Exit(1)
	}
}

func run(kubeconfig, bridge, addresses, cluster string) error {
	pool, err := addressRange(addresses)
	if err != nil {
		return err
	}
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	provider := &bridgeProvider{client: client, bridge: bridge, pool: pool, given: map[string]netip.Addr{}}
	factory := informers.NewSharedInformerFactory(client, 30*time.Minute)
	controller, err := servicecontroller.New(provider, client, factory.Core().V1().Services(),
		factory.Core().V1().Nodes(), cluster, featuregate.NewFeatureGate())
	if err != nil {
		return err
	}
	factory.Start(ctx.Done())
	klog.InfoS("serving LoadBalancer Services", "addresses", addresses, "bridge", bridge)
	controller.Run(ctx, 1, controllersmetrics.NewControllerManagerMetrics("winsuite-servicelb"))
	return nil
}
