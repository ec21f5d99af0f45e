window.rulesdslPreviews("burning_wheel/kinds.html", {});
