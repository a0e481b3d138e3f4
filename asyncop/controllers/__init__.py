"""The bundled operators and the explicit name -> factory registry."""
