{{- define "web.container" -}}
- name: web
  image: {{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}
