// Command validate checks the manifests `helm template` renders (read on
// stdin, YAML documents separated by ---) without a cluster:
//
//   - each document decodes strictly into its Kubernetes Go type
//     (k8s.io/api for the built-in kinds, prometheus-operator's for
//     ServiceMonitor): an unknown or misspelt field, a wrong type or a
//     malformed quantity is an error, as the API server's schema would
//     make it;
//   - names are DNS-1123 (labels for Services, subdomains otherwise), port
//     names valid (IANA service names in pods, DNS labels in Services),
//     label keys and values valid;
//   - references inside the release hold: a workload's selector matches its
//     pod template, a Service selects some pod template, a StatefulSet's
//     serviceName is a headless Service, every ConfigMap volume names a
//     ConfigMap of the release, every named targetPort is a port of the
//     pods the Service selects, a ServiceMonitor selects a Service with its
//     port;
//   - a kind not listed here is an error (the chart grew a kind this
//     check does not know).
//
// Usage: helm template … | validate [-min-docs N]
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// release is what the documents declare, for the reference checks.
type release struct {
	configMaps map[string]bool
	services   []*corev1.Service
	pods       []pod // every workload's pod template
	monitors   []*monv1.ServiceMonitor
	sts        []*appsv1.StatefulSet
}

type pod struct {
	owner  string
	labels map[string]string
	spec   *corev1.PodSpec
}

func main() {
	minDocs := flag.Int("min-docs", 1, "fail when fewer documents are read")
	flag.Parse()
	n, errs := validate(os.Stdin)
	for _, e := range errs {
		fmt.Fprintln(os.Stderr, "validate:", e)
	}
	if n < *minDocs {
		fmt.Fprintf(os.Stderr, "validate: %d documents, want at least %d\n", n, *minDocs)
		os.Exit(1)
	}
	if len(errs) > 0 {
		os.Exit(1)
	}
	fmt.Printf("validate: %d documents valid\n", n)
}

func validate(r io.Reader) (int, []error) {
	rel := &release{configMaps: map[string]bool{}}
	var errs []error
	n := 0
	for i, doc := range splitDocs(r) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
			continue
		}
		if tm.Kind == "" {
			continue // an empty document (a disabled template)
		}
		n++
		if err := rel.add(tm, doc); err != nil {
			errs = append(errs, fmt.Errorf("%s (document %d): %w", tm.Kind, i, err))
		}
	}
	return n, append(errs, rel.check()...)
}

// splitDocs splits a YAML stream at "---" lines, dropping comment-only documents.
func splitDocs(r io.Reader) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	flush := func() {
		if strings.TrimSpace(cur.String()) != "" {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "---") {
			flush()
			continue
		} else {
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	flush()
	return docs
}

func (rel *release) add(tm metav1.TypeMeta, doc []byte) error {
	switch tm.APIVersion + "/" + tm.Kind {
	case "v1/ConfigMap":
		var o corev1.ConfigMap
		if err := strict(doc, &o); err != nil {
			return err
		}
		rel.configMaps[o.Name] = true
		return meta(o.ObjectMeta, false)
	case "v1/Service":
		var o corev1.Service
		if err := strict(doc, &o); err != nil {
			return err
		}
		rel.services = append(rel.services, &o)
		for _, p := range o.Spec.Ports {
			if p.Port < 1 || p.Port > 65535 {
				return fmt.Errorf("%s: port %d out of range", o.Name, p.Port)
			}
			// A Service's port names are DNS labels (a container's are
			// IANA service names), required once there are several.
			if errs := validation.IsDNS1123Label(p.Name); len(errs) > 0 && (p.Name != "" || len(o.Spec.Ports) > 1) {
				return fmt.Errorf("%s: port name %q: %s", o.Name, p.Name, strings.Join(errs, "; "))
			}
		}
		return meta(o.ObjectMeta, true)
	case "apps/v1/Deployment":
		var o appsv1.Deployment
		if err := strict(doc, &o); err != nil {
			return err
		}
		return rel.workload(o.ObjectMeta, o.Spec.Selector, &o.Spec.Template)
	case "apps/v1/StatefulSet":
		var o appsv1.StatefulSet
		if err := strict(doc, &o); err != nil {
			return err
		}
		rel.sts = append(rel.sts, &o)
		for _, c := range o.Spec.VolumeClaimTemplates {
			if _, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
				return fmt.Errorf("%s: volumeClaimTemplate %s requests no storage", o.Name, c.Name)
			}
		}
		return rel.workload(o.ObjectMeta, o.Spec.Selector, &o.Spec.Template)
	case "monitoring.coreos.com/v1/ServiceMonitor":
		var o monv1.ServiceMonitor
		if err := strict(doc, &o); err != nil {
			return err
		}
		rel.monitors = append(rel.monitors, &o)
		return meta(o.ObjectMeta, false)
	}
	return fmt.Errorf("kind %s/%s is not checked here: add it to deploy/helm/validate", tm.APIVersion, tm.Kind)
}

// strict decodes doc into o, refusing unknown fields.
func strict(doc []byte, o any) error {
	return yaml.UnmarshalStrict(doc, o)
}

func meta(m metav1.ObjectMeta, label bool) error {
	check := validation.IsDNS1123Subdomain
	if label {
		check = validation.IsDNS1123Label
	}
	if m.Name == "" {
		return errors.New("metadata.name is empty")
	}
	if errs := check(m.Name); len(errs) > 0 {
		return fmt.Errorf("name %q: %s", m.Name, strings.Join(errs, "; "))
	}
	return labelsValid(m.Labels)
}

func labelsValid(l map[string]string) error {
	for k, v := range l {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("label %s value %q: %s", k, v, strings.Join(errs, "; "))
		}
	}
	return nil
}

func portName(n string) error {
	if errs := validation.IsValidPortName(n); len(errs) > 0 {
		return fmt.Errorf("port name %q: %s", n, strings.Join(errs, "; "))
	}
	return nil
}

func (rel *release) workload(m metav1.ObjectMeta, sel *metav1.LabelSelector, t *corev1.PodTemplateSpec) error {
	if err := meta(m, false); err != nil {
		return err
	}
	if sel == nil {
		return fmt.Errorf("%s: no selector", m.Name)
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return fmt.Errorf("%s: selector: %w", m.Name, err)
	}
	if s.Empty() || !s.Matches(labels.Set(t.Labels)) {
		return fmt.Errorf("%s: selector %s does not match the pod template's labels %v", m.Name, s, t.Labels)
	}
	if err := labelsValid(t.Labels); err != nil {
		return fmt.Errorf("%s: pod template: %w", m.Name, err)
	}
	if len(t.Spec.Containers) == 0 {
		return fmt.Errorf("%s: no containers", m.Name)
	}
	for _, c := range t.Spec.Containers {
		if c.Image == "" || strings.HasSuffix(c.Image, ":") {
			return fmt.Errorf("%s: container %s image %q", m.Name, c.Name, c.Image)
		}
		for _, p := range c.Ports {
			if err := portName(p.Name); err != nil {
				return fmt.Errorf("%s: container %s: %w", m.Name, c.Name, err)
			}
		}
		mounts := map[string]bool{}
		for _, v := range t.Spec.Volumes {
			mounts[v.Name] = true
		}
		for _, v := range c.VolumeMounts {
			if !mounts[v.Name] && !claimTemplate(rel, m.Name, v.Name) {
				return fmt.Errorf("%s: container %s mounts %s, which is no volume", m.Name, c.Name, v.Name)
			}
		}
	}
	rel.pods = append(rel.pods, pod{owner: m.Name, labels: t.Labels, spec: &t.Spec})
	return nil
}

// claimTemplate: name is a volumeClaimTemplate of the StatefulSet owner.
func claimTemplate(rel *release, owner, name string) bool {
	for _, s := range rel.sts {
		if s.Name != owner {
			continue
		}
		for _, c := range s.Spec.VolumeClaimTemplates {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}

func (rel *release) check() []error {
	var errs []error
	for _, p := range rel.pods {
		for _, v := range p.spec.Volumes {
			if v.ConfigMap != nil && !rel.configMaps[v.ConfigMap.Name] {
				errs = append(errs, fmt.Errorf("%s: volume %s: ConfigMap %s not in the release", p.owner, v.Name, v.ConfigMap.Name))
			}
		}
	}
	for _, svc := range rel.services {
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		var selected []pod
		for _, p := range rel.pods {
			if len(svc.Spec.Selector) > 0 && sel.Matches(labels.Set(p.labels)) {
				selected = append(selected, p)
			}
		}
		if len(selected) == 0 {
			errs = append(errs, fmt.Errorf("Service %s selects no pod template (%v)", svc.Name, svc.Spec.Selector))
			continue
		}
		for _, sp := range svc.Spec.Ports {
			if sp.TargetPort.StrVal == "" {
				continue
			}
			for _, p := range selected {
				if !hasPort(p.spec, sp.TargetPort.StrVal) {
					errs = append(errs, fmt.Errorf("Service %s: targetPort %s is no port of %s's pods", svc.Name, sp.TargetPort.StrVal, p.owner))
				}
			}
		}
	}
	for _, s := range rel.sts {
		ok := false
		for _, svc := range rel.services {
			ok = ok || svc.Name == s.Spec.ServiceName && svc.Spec.ClusterIP == corev1.ClusterIPNone
		}
		if !ok {
			errs = append(errs, fmt.Errorf("StatefulSet %s: serviceName %q is no headless Service of the release", s.Name, s.Spec.ServiceName))
		}
	}
	for _, m := range rel.monitors {
		s, err := metav1.LabelSelectorAsSelector(&m.Spec.Selector)
		if err != nil {
			errs = append(errs, fmt.Errorf("ServiceMonitor %s: %w", m.Name, err))
			continue
		}
		for _, ep := range m.Spec.Endpoints {
			found := false
			for _, svc := range rel.services {
				if !s.Matches(labels.Set(svc.Labels)) {
					continue
				}
				for _, p := range svc.Spec.Ports {
					found = found || ep.Port != "" && p.Name == ep.Port
				}
			}
			if !found {
				errs = append(errs, fmt.Errorf("ServiceMonitor %s: no Service it selects has a port %q", m.Name, ep.Port))
			}
		}
	}
	return errs
}

func hasPort(spec *corev1.PodSpec, name string) bool {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}
