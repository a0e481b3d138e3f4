{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: release-name prefixed unless it already contains the chart name. */}}
{{- define "operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "operator.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace -}}
{{- end -}}

{{/*
The namespaced RBAC rules of the enabled controllers plus the manager's own (events), read
from files/rbac-rules.yaml, which `asyncop generate` writes from the code (an empty
`controllers` value means every controller in that file).
*/}}
{{- define "operator.controllerRules" -}}
{{- $all := .Files.Get "files/rbac-rules.yaml" | fromYaml -}}
{{- $rules := list -}}
{{- range $all.manager -}}
{{- $rules = append $rules . -}}
{{- end -}}
{{- $names := .Values.controllers | default (keys $all.controllers | sortAlpha) -}}
{{- range $names -}}
{{- $c := index $all.controllers . | default list -}}
{{- range $c -}}
{{- $rules = append $rules . -}}
{{- end -}}
{{- end -}}
{{- toYaml $rules -}}
{{- end -}}

{{- define "operator.leaseRules" -}}
{{- $all := .Files.Get "files/rbac-rules.yaml" | fromYaml -}}
{{- if .Values.sharding.enabled -}}
{{- toYaml $all.sharding -}}
{{- else -}}
{{- toYaml $all.leaderElection -}}
{{- end -}}
{{- end -}}
