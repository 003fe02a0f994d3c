{{/*
Names: <release>-<role>, as apache/rocketmq-docker's chart names them
(rocketmq-<role>.fullname), truncated to 63 characters for DNS.
*/}}
{{- define "rocketmq.fullname" -}}
{{- $v := index .root.Values .role -}}
{{- if $v.fullnameOverride -}}
{{- $v.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .root.Chart.Name $v.nameOverride -}}
{{- if contains $name .root.Release.Name -}}
{{- .root.Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .root.Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "rocketmq-nameserver.fullname" -}}{{ include "rocketmq.fullname" (dict "root" . "role" "nameserver") }}{{- end -}}
{{- define "rocketmq-broker.fullname" -}}{{ include "rocketmq.fullname" (dict "root" . "role" "broker") }}{{- end -}}
{{- define "rocketmq-proxy.fullname" -}}{{ include "rocketmq.fullname" (dict "root" . "role" "proxy") }}{{- end -}}
{{- define "rocketmq-controller.fullname" -}}{{ include "rocketmq.fullname" (dict "root" . "role" "controller") }}{{- end -}}

{{/* Selector labels of a role: app.kubernetes.io/name is the role's name. */}}
{{- define "rocketmq.selectorLabels" -}}
{{- $v := index .root.Values .role -}}
app.kubernetes.io/name: {{ default .root.Chart.Name $v.nameOverride | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "rocketmq.labels" -}}
{{ include "rocketmq.selectorLabels" . }}
app.kubernetes.io/component: {{ .role }}
app.kubernetes.io/part-of: rocketmq
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "rocketmq.image" -}}
{{- $v := index .root.Values .role -}}
{{ $v.image.repository }}:{{ $v.image.tag | default .root.Chart.AppVersion }}
{{- end -}}

{{- define "rocketmq-broker.clusterName" -}}
{{- .Values.broker.conf.clusterNameOverride | default "DefaultCluster" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rocketmq-broker.brokerNamePrefix" -}}
{{- .Values.broker.conf.brokerNamePrefixOverride | default (include "rocketmq-broker.fullname" .) | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/* The name servers' headless Service, one A record per ready pod. */}}
{{- define "rocketmq-nameserver.headless" -}}
{{- printf "%s-headless.%s.svc" (include "rocketmq-nameserver.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/*
Shell lines that set NAMESRV_ADDR to every name server (ip:port;ip:port),
from the headless Service's records, waiting up to 60 s for one; the
Service's name when none shows (its own DNS answers later). broker.namesrvAddr
given: that, unchanged.
*/}}
{{- define "rocketmq.namesrvAddrScript" -}}
{{- if .Values.broker.namesrvAddr -}}
NAMESRV_ADDR={{ .Values.broker.namesrvAddr | quote }}
{{- else -}}
h={{ include "rocketmq-nameserver.headless" . }}; p={{ .Values.nameserver.port }}; i=0
while :; do
  a=$(getent ahostsv4 "$h" | awk -v p="$p" '!seen[$1]++ { printf "%s%s:%s", (n++ ? ";" : ""), $1, p }')
  [ -n "$a" ] || [ $i -ge 60 ] && break
  i=$((i + 1)); sleep 1
done
NAMESRV_ADDR=${a:-{{ include "rocketmq-nameserver.fullname" . }}:{{ .Values.nameserver.service.servicePort }}}
{{- end }}
export NAMESRV_ADDR
{{- end -}}

{{/* The controllers' Remoting addresses, host:port;host:port (the pods' stable DNS names). */}}
{{- define "rocketmq-controller.addrs" -}}
{{- $name := include "rocketmq-controller.fullname" . -}}
{{- $addrs := list -}}
{{- range $i := until (int .Values.controller.replicas) -}}
{{- $addrs = append $addrs (printf "%s-%d.%s.%s.svc:%d" $name $i $name $.Release.Namespace (int $.Values.controller.service.port)) -}}
{{- end -}}
{{- join ";" $addrs -}}
{{- end -}}
